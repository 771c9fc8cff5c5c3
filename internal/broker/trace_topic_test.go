package broker

import (
	"testing"

	"github.com/go-rocketmq/rocketmq"
)

// traceTopicEnable makes the broker create the trace topic at start with
// one read and one write queue (Java's TopicConfigManager); off, it has
// none until a send auto-creates it.
func TestTraceTopicEnable(t *testing.T) {
	tests := []struct {
		name   string
		enable bool
		topic  string
		want   string
	}{
		{"off", false, "", ""},
		{"default name", true, "", rocketmq.TopicTrace},
		{"custom name", true, "my_trace", "my_trace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t, Config{ListenAddr: "127.0.0.1:0", StoreDir: t.TempDir(),
				TraceTopicEnable: tc.enable, MsgTraceTopicName: tc.topic})
			table := b.topics.wrapper().TopicConfigTable
			if tc.want == "" {
				if _, ok := table[rocketmq.TopicTrace]; ok {
					t.Fatalf("trace topic created with traceTopicEnable off")
				}
				return
			}
			got, ok := table[tc.want]
			if !ok {
				t.Fatalf("topic %s missing", tc.want)
			}
			if got.ReadQueueNums != 1 || got.WriteQueueNums != 1 || got.Perm != rocketmq.PermRead|rocketmq.PermWrite {
				t.Errorf("%s = %+v, want 1 queue, perm 6", tc.want, got)
			}
		})
	}
}
