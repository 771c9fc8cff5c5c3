//go:build !unix

package main

import (
	"errors"
	"time"
)

func processCPU() (time.Duration, error) {
	return 0, errors.New("process CPU time needs getrusage (unix only)")
}
