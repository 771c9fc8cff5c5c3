package mqclient

import (
	"errors"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestOneLine(t *testing.T) {
	faq := "No topic route info in name server for the topic: T\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	tests := []struct{ name, in, want string }{
		{"prefix added", "x", "rocketmq: x"},
		{"one prefix", "rocketmq: a: rocketmq: b: rocketmq: c", "rocketmq: a: b: c"},
		{"joined", "rocketmq: a\nrocketmq: b", "rocketmq: a; b"},
		{"faq dropped", "rocketmq: TOPIC_NOT_EXIST: " + faq, "rocketmq: TOPIC_NOT_EXIST: No topic route info in name server for the topic: T"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := OneLine(tc.in); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	re := &remoting.Error{Code: remoting.TopicNotExist, Remark: faq}
	err := Errorf("route of %q: %w", "T", errors.Join(re, rocketmq.ErrTimeout))
	if want := "rocketmq: route of \"T\": TOPIC_NOT_EXIST: No topic route info in name server for the topic: T; request timed out"; err.Error() != want {
		t.Fatalf("got  %q\nwant %q", err, want)
	}
	var got *remoting.Error
	if !errors.As(err, &got) || got.Remark != faq || !errors.Is(err, rocketmq.ErrTimeout) {
		t.Fatalf("wrapped errors lost: %v", err)
	}
}
