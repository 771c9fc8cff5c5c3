package main

import "testing"

// The README's first command must work on a fresh machine: with no
// -namesrv, run starts its own cluster, sends and stops it.
func TestRunWithOwnCluster(t *testing.T) {
	if err := run(""); err != nil {
		t.Fatal(err)
	}
}
