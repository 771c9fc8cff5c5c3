package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the broker process, as the
// rmqbench binary does: -broker child re-executes os.Executable().
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		os.Exit(runBrokerChild(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
