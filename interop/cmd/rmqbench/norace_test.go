//go:build !race

package main

// raceEnabled reports a -race build: the official client's orderly
// consumer and its short in-process run, both racy inside that client,
// are then left out of the tests.
const raceEnabled = false
