package consumer

import (
	"errors"
	"testing"

	"github.com/go-rocketmq/rocketmq"
)

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		ok   bool
		is   error
	}{
		{"valid", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876")}, true, nil},
		{"no group", []Option{WithNameServers("127.0.0.1:9876")}, false, nil},
		{"reserved group", []Option{WithGroup("DEFAULT_CONSUMER"), WithNameServers("127.0.0.1:9876")}, false, nil},
		{"bad group", []Option{WithGroup("a b"), WithNameServers("127.0.0.1:9876")}, false, nil},
		{"no NameServer", []Option{WithGroup("g")}, false, rocketmq.ErrNoNameServer},
		{"bad namespace", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithNamespace("a%b")}, false, nil},
	}
	t.Setenv("NAMESRV_ADDR", "")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := newConfig(tc.opts...)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			if tc.ok && (cfg.group != "g" || cfg.client.NameServers[0] != "127.0.0.1:9876") {
				t.Fatalf("config %+v", cfg)
			}
		})
	}
}
