package transport

import (
	"context"
	"errors"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestErrorText(t *testing.T) {
	frameErr := &remoting.FrameError{Kind: remoting.ErrFrameTooLarge, Detail: "frame length 1213486160 exceeds 16777216"}
	tests := []struct {
		name string
		err  *Error
		want string
		is   []error
	}{
		{"timeout", newErr("wait", "h:1", 7, ErrTimeout, nil), "rocketmq: h:1: request timed out", []error{rocketmq.ErrTimeout}},
		{"ctx deadline", newErr("wait", "h:1", 7, ErrTimeout, context.DeadlineExceeded), "rocketmq: h:1: request timed out: context deadline exceeded", []error{rocketmq.ErrTimeout, context.DeadlineExceeded}},
		{"dial", newErr("dial", "h:1", 0, ErrDial, errors.New("connection refused")), "rocketmq: h:1: dial failed: connection refused", []error{rocketmq.ErrDial}},
		{"closed", newErr("send", "h:1", 0, ErrClosed, nil), "rocketmq: h:1: client closed", []error{rocketmq.ErrClosed}},
		{"not rocketmq", newErr("wait", "h:1", 3, ErrConnClosed, sniff([]byte("HTTP/1.1 400 Bad Request\r\n"), frameErr)),
			"rocketmq: h:1 does not speak the RocketMQ protocol (it answered HTTP)", []error{rocketmq.ErrConnClosed, rocketmq.ErrProtocol, remoting.ErrFrameTooLarge}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			for _, target := range tc.is {
				if !errors.Is(tc.err, target) {
					t.Errorf("not %v", target)
				}
			}
		})
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "": not recognised
	}{
		{"http", "HTTP/1.1 400 Bad Request\r\n", "HTTP"},
		{"tls alert", "\x15\x03\x01\x00\x02\x02\x46", "TLS; is the client missing WithTLS?"},
		{"ssh", "SSH-2.0-OpenSSH_9.6\r\n", `text "SSH-2.0-OpenSSH_9.6"`},
		{"binary", "\x7f\x00\x00\x01\x02", ""},
		{"short", "HT", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pe := sniff([]byte(tc.in), errors.New("bad frame"))
			got := ""
			if pe != nil {
				got = pe.Answered
			}
			if got != tc.want {
				t.Fatalf("sniff(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
