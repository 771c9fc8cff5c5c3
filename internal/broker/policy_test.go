package broker

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// loadVectors decodes one group of testdata/java-vectors.json into v.
func loadVectors(t *testing.T, group string, v any) {
	t.Helper()
	testutil.LoadJavaVectors(t, "../../testdata", group, v)
}

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
	var ve *rocketmq.ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s: %v, want Java's %q", what, err, javaText)
		return
	}
	if ve.Reason != javaText || err.Error() != "rocketmq: "+javaText {
		t.Errorf("%s: reason %q, want %q", what, ve.Reason, javaText)
	}
}

func TestBrokerValidatorsJavaVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name                *string   `json:"name"`
			Broker              javaCheck `json:"brokerValidateTopic"`
			ClientIsSystemTopic javaCheck `json:"clientIsSystemTopic"`
		} `json:"cases"`
	}
	loadVectors(t, "validators", &v)
	if len(v.Cases) != 43 {
		t.Fatalf("%d cases", len(v.Cases))
	}
	for i, c := range v.Cases {
		if c.Name == nil { // Java null: the client checks only
			continue
		}
		name := *c.Name
		t.Run(strings.Repeat("_", i%3)+name[:min(len(name), 30)], func(t *testing.T) {
			if !c.Broker.OK && c.Broker.Code != 1 {
				t.Errorf("broker code %d", c.Broker.Code)
			}
			expect(t, "ValidateTopicBroker", ValidateTopicBroker(name), c.Broker, c.Broker.Remark)
			expect(t, "CheckNotSystemTopic", CheckNotSystemTopic(name), c.ClientIsSystemTopic, c.ClientIsSystemTopic.ErrorMessage)
		})
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"blank", ValidateTopicBroker(" \t"), rocketmq.ErrBlankName},
		{"long and illegal", ValidateTopicBroker(strings.Repeat("a.", 64)), rocketmq.ErrIllegalName},
		{"long", ValidateTopicBroker(strings.Repeat("a", 128)), rocketmq.ErrNameTooLong},
		{"system topic", CheckNotSystemTopic("rmq_sys_x"), rocketmq.ErrSystemTopic},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.err, c.want)
		}
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
				if row.Level != i+1 || DelayLevelQueueID(row.Level) != row.QueueID {
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
					len(levels) != rocketmq.MaxDelayLevel || rocketmq.MaxDelayLevel != ScheduleQueueNums {
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
