//go:build !race

package main

// raceEnabled reports a -race build: the official client's orderly
// consumer is then left out of the tests.
const raceEnabled = false
