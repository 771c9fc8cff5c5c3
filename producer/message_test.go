package producer

import (
	"errors"
	"testing"

	"github.com/go-rocketmq/rocketmq"
)

func TestNewMessageChecks(t *testing.T) {
	cases := []struct {
		name  string
		topic string
		opts  []MessageOption
		want  error
	}{
		{"ok", "TopicTest", []MessageOption{Tag("TagA"), Keys("k1")}, nil},
		{"blank topic", " ", nil, rocketmq.ErrBlankName},
		{"illegal topic", "a b", nil, rocketmq.ErrIllegalName},
		{"forbidden topic", rocketmq.TopicSchedule, nil, rocketmq.ErrNotAllowedSendTopic},
		{"bad tag", "TopicTest", []MessageOption{Tag("a\x01b")}, rocketmq.ErrPropertySeparator},
		{"reserved property", "TopicTest", []MessageOption{Property(rocketmq.PropertyTags, "x")}, rocketmq.ErrReservedProperty},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := NewMessage(c.topic, []byte("b"), c.opts...)
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if err != nil {
				if m != nil {
					t.Fatal("a message with the error")
				}
				return
			}
			if !m.WaitStoreMsgOK() || m.Property(rocketmq.PropertyWaitStoreMsgOK) != "true" || m.Tag() != "TagA" {
				t.Fatalf("properties %v", m.Properties)
			}
		})
	}
}
