package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestOfficialClientAgainstInProcessCluster runs rmqbench as a user would,
// without -namesrv: the official client against our NameServer and broker
// (rmqtest), every mode. Consume mode must get back exactly what it
// preloaded plus the warm-up message.
func TestOfficialClientAgainstInProcessCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and the official client")
	}
	tests := []struct {
		mode string
		args []string
	}{
		{modeSync, nil},
		{modeAsync, []string{"-window", "8"}},
		{modeOneway, nil},
		{modeBatch, []string{"-batch", "8"}},
		{modeConsume, []string{"-backlog", "400", "-batch", "16", "-duration", "30s"}},
		{modeSync + "-flush", []string{"-flush"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			mode := tt.mode
			if mode == modeSync+"-flush" {
				mode = modeSync
			}
			args := append([]string{"-mode", mode, "-callers", "2", "-size", "256", "-duration", "300ms"}, tt.args...)
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, errOut.String())
			}
			var r result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("stdout %q: %v", out.String(), err)
			}
			if r.Mode != mode || r.Msgs == 0 || r.Errors != 0 || r.MsgsPerS <= 0 {
				t.Fatalf("result %+v\nstderr: %s", r, errOut.String())
			}
			if mode == modeConsume && r.Msgs != 401 {
				t.Fatalf("consumed %d messages, want the 400 preloaded + 1 warm-up", r.Msgs)
			}
		})
	}
}
