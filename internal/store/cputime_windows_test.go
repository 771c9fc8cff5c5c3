package store

import (
	"time"

	"golang.org/x/sys/windows"
)

func cpuTime() time.Duration {
	var c, e, k, u windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &c, &e, &k, &u) != nil {
		return 0
	}
	return ticks(k) + ticks(u)
}

// ticks converts a FILETIME duration (100 ns units) to a Duration.
func ticks(f windows.Filetime) time.Duration {
	return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
}
