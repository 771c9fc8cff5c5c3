package rocketmq

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
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
			Broker                javaCheck `json:"brokerValidateTopic"`
			ClientIsSystemTopic   javaCheck `json:"clientIsSystemTopic"`
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
			if !c.Broker.OK && c.Broker.Code != 1 {
				t.Errorf("broker code %d", c.Broker.Code)
			}
			expect(t, "ValidateTopicBroker", ValidateTopicBroker(name), c.Broker, c.Broker.Remark)
			expect(t, "CheckNotSystemTopic", CheckNotSystemTopic(name), c.ClientIsSystemTopic, c.ClientIsSystemTopic.ErrorMessage)
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
		{"system topic", CheckNotSystemTopic("rmq_sys_x"), ErrSystemTopic},
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

func TestDelayLevelsJavaVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name          string `json:"name"`
			Levels        string `json:"messageDelayLevel"`
			ParseOK       bool   `json:"parseOk"`
			MaxDelayLevel int    `json:"maxDelayLevel"`
			Table         []struct {
				Level   int   `json:"level"`
				QueueID int   `json:"queueId"`
				DelayMs int64 `json:"delayMs"`
				Deliver int64 `json:"deliverTimestampFor1700000000000"`
			} `json:"table"`
			Unknown int64 `json:"unknownLevel19DeliverTimestampFor1700000000000"`
		} `json:"cases"`
	}
	loadVectors(t, "delayLevels", &v)
	if len(v.Cases) != 3 {
		t.Fatalf("%d cases", len(v.Cases))
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			levels, err := ParseDelayLevels(c.Levels)
			if (err == nil) != c.ParseOK {
				t.Fatalf("err %v, parseOk %v", err, c.ParseOK)
			}
			if err != nil && !errors.Is(err, ErrInvalidDelayLevels) {
				t.Errorf("error %v does not wrap ErrInvalidDelayLevels", err)
			}
			// Java bumps maxDelayLevel before it fails on the bad token;
			// the table holds only the parsed levels either way.
			if len(levels) != len(c.Table) {
				t.Fatalf("%d levels, want %d (Java maxDelayLevel %d)", len(levels), len(c.Table), c.MaxDelayLevel)
			}
			for i, row := range c.Table {
				if row.Level != i+1 || DelayLevelQueueID(row.Level) != row.QueueID || QueueIDDelayLevel(row.QueueID) != row.Level {
					t.Errorf("row %d: level %d queue %d", i, row.Level, row.QueueID)
				}
				if levels[i].Milliseconds() != row.DelayMs {
					t.Errorf("level %d: %v, want %d ms", row.Level, levels[i], row.DelayMs)
				}
				if got := DelayDeliverTimestamp(levels, row.Level, 1700000000000); got != row.Deliver {
					t.Errorf("level %d deliver %d, want %d", row.Level, got, row.Deliver)
				}
			}
			if got := DelayDeliverTimestamp(levels, 19, 1700000000000); got != c.Unknown {
				t.Errorf("unknown level deliver %d, want %d", got, c.Unknown)
			}
			if c.Name == "default" {
				if c.Levels != DefaultDelayLevelString || !slices.Equal(levels, DefaultDelayLevels()) ||
					len(levels) != MaxDelayLevel || MaxDelayLevel != ScheduleQueueNums {
					t.Errorf("default table differs: %v", DefaultDelayLevels())
				}
			}
		})
	}
	for _, bad := range []string{"5", "-1s", "s", "1.5m", "99999999999999999d"} {
		if _, err := ParseDelayLevels(bad); !errors.Is(err, ErrInvalidDelayLevels) {
			t.Errorf("ParseDelayLevels(%q) = %v", bad, err)
		}
	}
	if l, err := ParseDelayLevels("  1s   2m "); err != nil || !slices.Equal(l, []time.Duration{time.Second, 2 * time.Minute}) {
		t.Errorf("extra spaces: %v %v", l, err)
	}
	if DelayDeliverTimestamp(DefaultDelayLevels(), 0, 5) != 1005 {
		t.Error("level 0 falls back to +1000")
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
		!IsSysConsumerGroup(GroupSysRMQTrans) || IsSysConsumerGroup("G") {
		t.Error("prefix predicates")
	}
}
