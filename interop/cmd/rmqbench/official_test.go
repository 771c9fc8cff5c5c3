package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestOfficialDriverAgainstFakePeer runs every producer mode of rmqbench
// end to end with the official client against the fake peer.
func TestOfficialDriverAgainstFakePeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the official client")
	}
	for _, mode := range []string{modeSync, modeAsync, modeOneway, modeBatch} {
		t.Run(mode, func(t *testing.T) {
			peer := startFakePeer(t)
			var out, errOut bytes.Buffer
			args := []string{"-namesrv", peer.addr(), "-mode", mode, "-callers", "2", "-batch", "4",
				"-size", "100", "-duration", "300ms", "-topic", "bench_" + mode}
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, errOut.String())
			}
			var r result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("stdout %q: %v", out.String(), err)
			}
			if r.Client != "official" || r.Mode != mode || r.Callers != 2 || r.Msgs == 0 || r.Errors != 0 ||
				r.MsgsPerS <= 0 || r.ClientCPUusMsg <= 0 {
				t.Fatalf("result %+v", r)
			}
			if mode != modeOneway && (r.P50us <= 0 || r.P99us < r.P50us) {
				t.Fatalf("latencies %+v", r)
			}
			if mode == modeBatch && r.Msgs%4 != 0 {
				t.Fatalf("batch msgs %d not a multiple of 4", r.Msgs)
			}
			// Stored besides the counted messages: the warm-up send, and in
			// oneway mode the closing sync send.
			extra := int64(1)
			if mode == modeOneway {
				extra = 2
			}
			if got := peer.stored.Load(); got != r.Msgs+extra {
				t.Fatalf("%v: peer stored %d, rmqbench counted %d (+%d uncounted)", errNotStored, got, r.Msgs, extra)
			}
			if peer.bad.Load() != 0 {
				t.Fatalf("%d messages without %s", peer.bad.Load(), runProperty)
			}
		})
	}
}
