package broker

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ScheduleQueueNums is the number of queues of SCHEDULE_TOPIC_XXXX (one per
// default delay level).
const ScheduleQueueNums = 18

// DefaultDelayLevelString is the broker's default messageDelayLevel.
const DefaultDelayLevelString = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

// ErrInvalidDelayLevels reports a malformed messageDelayLevel string.
var ErrInvalidDelayLevels = errors.New("rocketmq: invalid delay level table")

// DefaultDelayLevels returns the default table: element i is the delay of
// level i+1, which lives in queue i of SCHEDULE_TOPIC_XXXX.
func DefaultDelayLevels() []time.Duration {
	return []time.Duration{
		time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
		6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
		20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	}
}

// ParseDelayLevels parses a messageDelayLevel string like the broker's
// parseDelayLevel: space-separated tokens, each a decimal count followed by
// a unit s, m, h or d. On a bad token it returns the levels before it
// together with an error (the broker then runs with that partial table and
// reports failure). Runs of spaces are tolerated.
func ParseDelayLevels(s string) ([]time.Duration, error) {
	fields := strings.Fields(s)
	levels := make([]time.Duration, 0, len(fields))
	for i, f := range fields {
		var unit time.Duration
		switch f[len(f)-1] {
		case 's':
			unit = time.Second
		case 'm':
			unit = time.Minute
		case 'h':
			unit = time.Hour
		case 'd':
			unit = 24 * time.Hour
		default:
			return levels, fmt.Errorf("%w: level %d %q: unknown unit", ErrInvalidDelayLevels, i+1, f)
		}
		n, err := strconv.ParseInt(f[:len(f)-1], 10, 64)
		if err != nil || n < 0 || n > int64((1<<63-1)/unit) {
			return levels, fmt.Errorf("%w: level %d %q: bad count", ErrInvalidDelayLevels, i+1, f)
		}
		levels = append(levels, time.Duration(n)*unit)
	}
	return levels, nil
}

// DelayLevelQueueID returns the SCHEDULE_TOPIC_XXXX queue of a level.
func DelayLevelQueueID(level int) int { return level - 1 }

// DelayDeliverTimestamp returns when a message stored at storeMs with delay
// level is due (the consume-queue tagsCode of a parked message). An unknown
// level falls back to storeMs + 1000, as the broker's
// computeDeliverTimestamp does.
func DelayDeliverTimestamp(levels []time.Duration, level int, storeMs int64) int64 {
	if level >= 1 && level <= len(levels) {
		return storeMs + levels[level-1].Milliseconds()
	}
	return storeMs + 1000
}
