package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting/message"
	jsoniter "github.com/json-iterator/go"
)

// The on-disk side of timer messages: the timer queue (the log) and
// config/timerProgress.json, the finished offsets of that queue as ranges:
//
//	{"done":[[0,5000],[5002,5010]]}
//
// Offsets below the first gap are all finished, so after a clean run the
// file is one range; out-of-order deliveries (a short timer behind a long
// one) add ranges until the gaps close.

// offsetRange is the half-open interval [from, to).
type offsetRange struct{ from, to int64 }

// offsetRanges is a set of offsets as sorted, disjoint, non-adjacent ranges.
type offsetRanges []offsetRange

// after returns the index of the first range ending after x.
func (r offsetRanges) after(x int64) int {
	return sort.Search(len(r), func(i int) bool { return r[i].to > x })
}

func (r offsetRanges) contains(x int64) bool {
	i := r.after(x)
	return i < len(r) && r[i].from <= x
}

// nextGap returns the smallest offset ≥ x not in the set.
func (r offsetRanges) nextGap(x int64) int64 {
	if i := r.after(x); i < len(r) && r[i].from <= x {
		return r[i].to
	}
	return x
}

func (r *offsetRanges) add(x int64) {
	s := *r
	i := sort.Search(len(s), func(i int) bool { return s[i].to >= x })
	switch {
	case i < len(s) && s[i].from <= x && x < s[i].to:
		return
	case i < len(s) && s[i].to == x:
		s[i].to = x + 1
		if i+1 < len(s) && s[i+1].from == x+1 {
			s[i].to = s[i+1].to
			s = append(s[:i+1], s[i+2:]...)
		}
	case i < len(s) && s[i].from == x+1:
		s[i].from = x
	default:
		s = append(s, offsetRange{})
		copy(s[i+1:], s[i:])
		s[i] = offsetRange{x, x + 1}
	}
	*r = s
}

// trimFrom removes every offset ≥ x.
func (r *offsetRanges) trimFrom(x int64) {
	s := *r
	i := s.after(x)
	if i < len(s) && s[i].from < x {
		s[i].to = x
		i++
	}
	*r = s[:i]
}

func (t *timerService) path() string {
	return filepath.Join(t.b.cfg.StoreDir, "config", "timerProgress.json")
}

// appendJSON writes the progress file.
func (r offsetRanges) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"done":[`...)
	for i, g := range r {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, g.from, 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, g.to, 10)
		dst = append(dst, ']')
	}
	return append(dst, "]}\n"...)
}

func parseOffsetRanges(data []byte) (offsetRanges, error) {
	var f struct {
		Done [][2]int64 `json:"done"`
	}
	if err := jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	r := make(offsetRanges, 0, len(f.Done))
	for _, g := range f.Done {
		if g[0] < 0 || g[1] <= g[0] || len(r) > 0 && g[0] <= r[len(r)-1].to {
			return nil, fmt.Errorf("range [%d,%d) out of order", g[0], g[1])
		}
		r = append(r, offsetRange{g[0], g[1]})
	}
	return r, nil
}

// load reads the progress file and rebuilds the pending heap from every
// unfinished entry of the timer queue. It runs in New, before any send.
func (t *timerService) load() error {
	data, err := store.ReadConfigFile(t.path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("rocketmq: broker: read %s: %w", t.path(), err)
	default:
		if t.done, err = parseOffsetRanges(data); err != nil {
			return fmt.Errorf("rocketmq: broker: parse %s: %w", t.path(), err)
		}
	}
	st := t.b.store
	lo, hi := st.MinOffset(topicTimer, 0), st.MaxOffset(topicTimer, 0)
	// Offsets the queue does not have (lost with an unsynced tail) will be
	// reused by new messages: they are not finished.
	t.done.trimFrom(hi)
	now := t.b.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for off := t.done.nextGap(lo); off < hi; off = t.done.nextGap(off + 1) {
		outMs, delKey, err := t.b.timerRecordTime(off)
		if err != nil {
			if errors.Is(err, errTimerRecordGone) {
				t.b.log.Warn("timer message unreadable, dropping", "offset", off, "err", err)
				t.finishLocked(off)
				continue
			}
			return fmt.Errorf("rocketmq: broker: load timer queue offset %d: %w", off, err)
		}
		if delKey == "" && outMs+t.precision <= now {
			t.unsure[off] = struct{}{}
		}
		t.addLocked(outMs, off, delKey)
	}
	if n := len(t.pending); n > 0 {
		t.b.log.Info("timer messages pending", "count", n, "overdue", len(t.unsure))
	}
	return nil
}

// persist writes the progress file when it changed since the last write.
func (t *timerService) persist() error {
	if t.b.cfg.DisableTimer {
		return nil // load did not run: keep the file for a later broker
	}
	t.persistMu.Lock()
	defer t.persistMu.Unlock()
	t.mu.Lock()
	version := t.version
	if version == t.persisted {
		t.mu.Unlock()
		return nil
	}
	data := t.done.appendJSON(nil)
	t.mu.Unlock()
	if err := store.WriteConfigFile(t.path(), data); err != nil {
		return fmt.Errorf("rocketmq: broker: persist timer progress: %w", err)
	}
	t.persisted = version
	return nil
}

func (t *timerService) persistLogged() {
	if err := t.persist(); err != nil {
		t.b.log.Error("persist timer progress", "err", err)
	}
}

// timerRecordTime reads TIMER_OUT_MS and TIMER_DEL_UNIQKEY of the parked
// record at a timer queue offset without decoding the whole message.
func (b *Broker) timerRecordTime(off int64) (outMs int64, delKey string, err error) {
	e, err := b.store.ConsumeQueueEntry(topicTimer, 0, off)
	if err == nil {
		var rec []byte
		if rec, err = b.store.MessageAt(e.PhysicalOffset); err == nil {
			props, perr := recordProperties(rec)
			if perr != nil {
				return 0, "", fmt.Errorf("%w: %w", errTimerRecordGone, perr)
			}
			outMs, perr = strconv.ParseInt(propValue(props, rocketmq.PropertyTimerOutMS), 10, 64)
			if perr != nil {
				return 0, "", fmt.Errorf("%w: TIMER_OUT_MS: %w", errTimerRecordGone, perr)
			}
			return outMs, propValue(props, rocketmq.PropertyTimerDelUniqKey), nil
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return 0, "", fmt.Errorf("%w: %w", errTimerRecordGone, err)
	}
	return 0, "", err
}

// recordProperties returns the properties string of a stored record.
func recordProperties(rec []byte) (string, error) {
	v, err := message.ScanRecord(rec)
	if err != nil {
		return "", err
	}
	return string(v.Properties), nil
}
