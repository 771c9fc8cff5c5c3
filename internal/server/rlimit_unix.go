//go:build unix

package server

import "golang.org/x/sys/unix"

// openReserve opens a spare descriptor to give back when accept runs out
// of them; -1 if it cannot.
func openReserve() int {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func closeReserve(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// fdLimit is the process's soft limit on open files, 0 if unknown.
func fdLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
