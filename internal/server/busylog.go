package server

import (
	"log/slog"
	"sync"
	"time"
)

// busyLogInterval is how often a burst of SYSTEM_BUSY answers is logged.
const busyLogInterval = 10 * time.Second

// busyLog rate-limits the SYSTEM_BUSY warning: the first refusal of a quiet
// period is logged at once, later ones are counted and reported in one line
// per interval, so a burst of thousands of refusals costs a few lines.
type busyLog struct {
	mu         sync.Mutex
	last       time.Time // when the last line was written
	suppressed int64     // refusals since then that were not logged
	now        func() time.Time
}

// note records one refusal and logs when the interval has passed.
func (l *busyLog) note(log *slog.Logger, code int32, remote string) {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	t := now()
	l.mu.Lock()
	if !l.last.IsZero() && t.Sub(l.last) < busyLogInterval {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	n := l.suppressed
	l.suppressed = 0
	l.last = t
	l.mu.Unlock()
	log.Warn("handlers saturated, answering SYSTEM_BUSY", logKeyCode, code, logKeyRemote, remote, "suppressed", n)
}
