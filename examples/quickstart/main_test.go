package main

import (
	"bytes"
	"strings"
	"testing"
)

// The README's first command must work on a fresh machine: with no
// -namesrv, run starts its own cluster, sends 10 messages, consumes them
// and stops the cluster.
func TestRunWithOwnCluster(t *testing.T) {
	var out bytes.Buffer
	if err := run("", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"received ", "tag=TagA keys=[order-0]", "tag=TagB keys=[order-9]", `body="hello 9"`, "consumed all 10 messages"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "\nreceived "); n != 10 {
		t.Errorf("%d messages received, want 10:\n%s", n, text)
	}
}
