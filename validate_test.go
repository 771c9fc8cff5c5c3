package rocketmq

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type javaCheck struct {
	OK           bool   `json:"ok"`
	ErrorMessage string `json:"errorMessage"`
	Code         int    `json:"code"`
	Remark       string `json:"remark"`
}

// expect compares a Go check with a Java result: nil for ok, else an error
// whose Reason is Java's text.
func expect(t *testing.T, what string, err error, want javaCheck, javaText string) {
	t.Helper()
	if want.OK {
		if err != nil {
			t.Errorf("%s: %v, Java accepts", what, err)
		}
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s: %v, want Java's %q", what, err, javaText)
		return
	}
	if ve.Reason != javaText || err.Error() != "rocketmq: "+javaText {
		t.Errorf("%s: reason %q, want %q", what, ve.Reason, javaText)
	}
}

func TestValidatorsJavaVectors(t *testing.T) {
	var v struct {
		Limits               map[string]int `json:"limits"`
		SystemTopics         []string       `json:"systemTopics"`
		NotAllowedSendTopics []string       `json:"notAllowedSendTopics"`
		Cases                []struct {
			Name                  *string   `json:"name"`
			CheckTopic            javaCheck `json:"checkTopic"`
			CheckGroup            javaCheck `json:"checkGroup"`
			IsTopicOrGroupIllegal bool      `json:"isTopicOrGroupIllegal"`
			IsSystemTopic         bool      `json:"isSystemTopic"`
			IsNotAllowedSendTopic bool      `json:"isNotAllowedSendTopic"`
			ClientIsNotAllowed    javaCheck `json:"clientIsNotAllowedSendTopic"`
		} `json:"cases"`
	}
	loadVectors(t, "validators", &v)
	if v.Limits["Validators.TOPIC_MAX_LENGTH"] != TopicMaxLength || v.Limits["Validators.CHARACTER_MAX_LENGTH"] != GroupMaxLength {
		t.Errorf("limits %v", v.Limits)
	}
	sys := SystemTopics()
	slices.Sort(sys)
	if !slices.Equal(sys, v.SystemTopics) {
		t.Errorf("SystemTopics %v, want %v", sys, v.SystemTopics)
	}
	na := NotAllowedSendTopics()
	slices.Sort(na)
	if !slices.Equal(na, v.NotAllowedSendTopics) {
		t.Errorf("NotAllowedSendTopics %v, want %v", na, v.NotAllowedSendTopics)
	}
	if len(v.Cases) != 43 {
		t.Fatalf("%d cases", len(v.Cases))
	}
	for i, c := range v.Cases {
		name := ""
		if c.Name != nil {
			name = *c.Name
		}
		t.Run(strings.Repeat("_", i%3)+name[:min(len(name), 30)], func(t *testing.T) {
			expect(t, "ValidateTopic", ValidateTopic(name), c.CheckTopic, c.CheckTopic.ErrorMessage)
			expect(t, "ValidateGroup", ValidateGroup(name), c.CheckGroup, c.CheckGroup.ErrorMessage)
			if c.Name == nil { // Java null: the client checks only
				return
			}
			if IsTopicOrGroupIllegal(name) != c.IsTopicOrGroupIllegal {
				t.Errorf("IsTopicOrGroupIllegal = %v", !c.IsTopicOrGroupIllegal)
			}
			if IsSystemTopic(name) != c.IsSystemTopic {
				t.Errorf("IsSystemTopic = %v", !c.IsSystemTopic)
			}
			if IsNotAllowedSendTopic(name) != c.IsNotAllowedSendTopic {
				t.Errorf("IsNotAllowedSendTopic = %v", !c.IsNotAllowedSendTopic)
			}
			expect(t, "CheckSendAllowed", CheckSendAllowed(name), c.ClientIsNotAllowed, c.ClientIsNotAllowed.ErrorMessage)
		})
	}
}

func TestValidateSentinels(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"blank topic", ValidateTopic(" \t"), ErrBlankName},
		{"long topic", ValidateTopic(strings.Repeat("a", 128)), ErrNameTooLong},
		{"illegal topic", ValidateTopic("a.b"), ErrIllegalName},
		{"long group", ValidateGroup(strings.Repeat("g", 256)), ErrNameTooLong},
		// 50 CJK characters are 150 bytes but 50 Java chars: illegal, not long.
		{"cjk topic", ValidateTopic(strings.Repeat("中", 50)), ErrIllegalName},
		{"emoji length", ValidateTopic(strings.Repeat("😀", 64)), ErrNameTooLong}, // 128 UTF-16 units
		{"forbidden send", CheckSendAllowed(TopicSchedule), ErrNotAllowedSendTopic},
		{"nbsp is not blank", ValidateTopic("\u00a0"), ErrIllegalName},
		{"ideographic space is blank", ValidateTopic("\u3000"), ErrBlankName},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !errors.Is(c.err, c.want) {
				t.Errorf("got %v, want %v", c.err, c.want)
			}
		})
	}
}

func TestValidateMessage(t *testing.T) {
	cases := []struct {
		name   string
		m      *Message
		max    int
		want   error
		reason string
	}{
		{"ok", &Message{Topic: "T", Body: []byte("x")}, 0, nil, ""},
		{"nil", nil, 0, ErrNilMessage, "the message is null"},
		{"bad topic", &Message{Topic: "", Body: []byte("x")}, 0, ErrBlankName, "The specified topic is blank"},
		{"forbidden", &Message{Topic: TopicSelfTest, Body: []byte("x")}, 0, ErrNotAllowedSendTopic,
			"Sending message to topic[SELF_TEST_TOPIC] is forbidden."},
		{"nil body", &Message{Topic: "T"}, 0, ErrNilBody, "the message body is null"},
		{"empty body", &Message{Topic: "T", Body: []byte{}}, 0, ErrEmptyBody, "the message body length is zero"},
		{"too large", &Message{Topic: "T", Body: make([]byte, 11)}, 10, ErrBodyTooLarge, "the message body size over max value, MAX: 10"},
		{"default max", &Message{Topic: "T", Body: make([]byte, DefaultMaxMessageSize+1)}, 0, ErrBodyTooLarge,
			"the message body size over max value, MAX: 4194304"},
		{"at max", &Message{Topic: "T", Body: make([]byte, 10)}, 10, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateMessage(c.m, c.max)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			var ve *ValidationError
			if c.want != nil && (!errors.As(err, &ve) || ve.Reason != c.reason) {
				t.Errorf("reason %v, want %q", err, c.reason)
			}
		})
	}
}

func TestPermAndNames(t *testing.T) {
	cases := []struct {
		perm  int
		str   string
		valid bool
	}{
		{0, "---", true}, {PermRead | PermWrite, "RW-", true}, {7, "RWX", true}, {PermRead, "R--", true},
		{PermWrite | PermInherit, "-WX", true}, {PermPriority, "---", false}, {-1, "RWX", false},
	}
	for _, c := range cases {
		if PermString(c.perm) != c.str || PermValid(c.perm) != c.valid {
			t.Errorf("perm %d: %s %v", c.perm, PermString(c.perm), PermValid(c.perm))
		}
	}
	if !PermReadable(6) || !PermWriteable(6) || PermInherited(6) {
		t.Error("perm 6 bits")
	}
	if RetryTopic("G") != "%RETRY%G" || DLQTopic("G") != "%DLQ%G" || ReplyTopic("DefaultCluster") != "DefaultCluster_REPLY_TOPIC" {
		t.Error("derived topic names")
	}
	if !IsRetryTopic("%RETRY%G") || IsRetryTopic("G") || !IsDLQTopic("%DLQ%G") || !IsLMQ("%LMQ%x") ||
		!IsSysConsumerGroup("CID_RMQ_SYS_TRANS") || IsSysConsumerGroup("G") {
		t.Error("prefix predicates")
	}
}
