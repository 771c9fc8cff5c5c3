package admin

import (
	"errors"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		is   error // nil: valid
		bad  bool
	}{
		{"valid", []Option{WithNameServers("127.0.0.1:9876"), WithCallTimeout(time.Second)}, nil, false},
		{"no NameServer", nil, rocketmq.ErrNoNameServer, true},
		{"bad timeout", []Option{WithNameServers("127.0.0.1:9876"), WithCallTimeout(0)}, nil, true},
	}
	t.Setenv("NAMESRV_ADDR", "")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := newConfig(tc.opts...)
			if (err != nil) != tc.bad || tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want bad=%v is=%v", err, tc.bad, tc.is)
			}
			if !tc.bad && cfg.client.RequestTimeout != time.Second {
				t.Fatalf("config %+v", cfg)
			}
		})
	}
}
