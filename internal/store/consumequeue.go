package store

import (
	"github.com/go-rocketmq/rocketmq/remoting/message"

	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"go.uber.org/atomic"
)

// cqUnit is the size of one consume-queue entry (docs/PROTOCOL.md §10.2).
const cqUnit = 20

// fillerSize marks a filler entry (0, 0x7FFFFFFF, 0) that pads a queue whose
// first entry is not at a file start.
const fillerSize = 0x7FFFFFFF

type cqEntry struct {
	phys int64
	size int32
	tags int64
}

func (e cqEntry) filler() bool { return e.size == fillerSize }

// consumeQueue is the index of one (topic, queueId): entry n at byte n*20 of
// its virtual address space, split into files of perFile entries named by
// their start byte offset. Readers use files/max/min without locks; all
// mutation happens under Store.mu (and unmapping under Store.life).
type consumeQueue struct {
	topic   string
	queueID int32
	dir     string
	perFile int64

	files atomic.Pointer[[]*mappedFile] // contiguous, ascending
	max   atomic.Int64                  // next offset = entries written
	min   atomic.Int64                  // first real entry
	cache *fileCache                    // maps the files on demand
}

func newConsumeQueue(root, topic string, queueID int32, perFile int64, cache *fileCache) *consumeQueue {
	q := &consumeQueue{
		topic:   topic,
		queueID: queueID,
		dir:     filepath.Join(root, topic, strconv.Itoa(int(queueID))),
		perFile: perFile,
		cache:   cache,
	}
	q.files.Store(new([]*mappedFile))
	return q
}

func (q *consumeQueue) fileBytes() int64 { return q.perFile * cqUnit }

// fileFor returns the file holding entry n, or nil.
func (q *consumeQueue) fileFor(n int64) *mappedFile {
	files := *q.files.Load()
	if len(files) == 0 || n < 0 {
		return nil
	}
	i := (n*cqUnit - files[0].start) / q.fileBytes()
	if n*cqUnit < files[0].start || i >= int64(len(files)) {
		return nil
	}
	return files[i]
}

// entry reads entry n; ok is false when no file holds it or the file
// cannot be mapped.
func (q *consumeQueue) entry(n int64) (cqEntry, bool) {
	f := q.fileFor(n)
	if f == nil || f.pin() != nil {
		return cqEntry{}, false
	}
	e := entryIn(f, n)
	f.unpin()
	return e, true
}

// entryIn reads entry n from f, which holds it and is pinned.
func entryIn(f *mappedFile, n int64) cqEntry {
	p := n*cqUnit - f.start
	b := f.data[p : p+cqUnit]
	be := binary.BigEndian
	return cqEntry{phys: int64(be.Uint64(b)), size: int32(be.Uint32(b[8:])), tags: int64(be.Uint64(b[12:]))}
}

// pinRange pins the files holding entries first..last (which exist), so
// that writing them cannot fail after the commit log was written.
func (q *consumeQueue) pinRange(first, last int64) error {
	for n := first; n <= last; {
		f := q.fileFor(n)
		if err := f.pin(); err != nil {
			if n > first {
				q.unpinRange(first, n-1)
			}
			return err
		}
		n = f.end() / cqUnit
	}
	return nil
}

func (q *consumeQueue) unpinRange(first, last int64) {
	for n := first; n <= last; {
		f := q.fileFor(n)
		f.unpin()
		n = f.end() / cqUnit
	}
}

// ensure makes sure a file holds entry n, creating the missing files after
// the current last one (or the single file holding n in an empty queue).
func (q *consumeQueue) ensure(n int64, s *Store) error {
	if q.fileFor(n) != nil {
		return nil
	}
	files := *q.files.Load()
	fb := q.fileBytes()
	target := n * cqUnit / fb * fb
	if len(files) > 0 && target < files[0].start {
		return fmt.Errorf("%w: consume queue %s/%d: offset %d before its first file", ErrCorrupt, q.topic, q.queueID, n)
	}
	if err := os.MkdirAll(q.dir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrIO, err)
	}
	next := target
	if len(files) > 0 {
		next = files[len(files)-1].end()
	}
	grown := append([]*mappedFile(nil), files...)
	for ; next <= target; next += fb {
		m, err := openMapped(filepath.Join(q.dir, offsetName(next)), next, fb, mapCreate)
		if err != nil {
			return fmt.Errorf("%w: create consume queue file: %v", ErrIO, err)
		}
		if q.cache != nil {
			q.cache.add(m)
		}
		grown = append(grown, m)
	}
	q.files.Store(&grown)
	return nil
}

// writeEntry stores e at n; a pinned file must hold n.
func (q *consumeQueue) writeEntry(n int64, e cqEntry, s *Store) {
	f := q.fileFor(n)
	p := n*cqUnit - f.start
	b := f.data[p : p+cqUnit]
	be := binary.BigEndian
	be.PutUint64(b, uint64(e.phys))
	be.PutUint32(b[8:], uint32(e.size))
	be.PutUint64(b[12:], uint64(e.tags))
	if s != nil {
		s.markDirty(f)
	}
}

// put writes entry n. Normally n == max; a gap (only during recovery, or an
// empty queue starting above 0) is padded with fillers. Call ensure first,
// then pin the files from the first entry to write (max, or the first
// file's start in an empty queue: putFrom) to n with pinRange.
func (q *consumeQueue) put(n int64, e cqEntry, s *Store) {
	from := q.putFrom()
	empty := q.max.Load() == 0
	for i := from; i < n; i++ {
		q.writeEntry(i, cqEntry{size: fillerSize}, s)
	}
	q.writeEntry(n, e, s)
	if empty {
		q.min.Store(n)
	}
	q.max.Store(n + 1)
}

// putFrom is the first entry the next put writes: max, or in an empty
// queue the start of its first file (padded with fillers).
func (q *consumeQueue) putFrom() int64 {
	if from := q.max.Load(); from > 0 {
		return from
	}
	return (*q.files.Load())[0].start / cqUnit
}

// truncate drops the entries from n on: clears them and deletes the files
// past n. Dropping every real entry empties the queue completely, so its
// offsets restart at 0. Only for recovery: it unmaps files.
func (q *consumeQueue) truncate(n int64) {
	if n >= q.max.Load() {
		return
	}
	empty := n <= q.min.Load()
	var keep []*mappedFile
	for _, f := range *q.files.Load() {
		if !empty && f.start < n*cqUnit {
			if f.end() > n*cqUnit {
				// Recovery only: a file that cannot be mapped keeps its
				// stale tail, which the next append overwrites.
				if f.pin() == nil {
					clear(f.data[n*cqUnit-f.start:])
					f.unpin()
				}
			}
			keep = append(keep, f)
			continue
		}
		f.close()
		os.Remove(f.path)
	}
	q.files.Store(&keep)
	if empty {
		q.min.Store(0)
		n = 0
	}
	q.max.Store(n)
}

func (q *consumeQueue) close() {
	for _, f := range *q.files.Load() {
		f.close()
	}
	q.files.Store(new([]*mappedFile))
}

// loadConsumeQueue maps the files of one queue directory and finds its
// written end. A malformed queue is reported as ErrCorrupt; the caller then
// removes it and rebuilds it from the commit log.
func loadConsumeQueue(root, topic string, queueID int32, perFile int64, cache *fileCache) (*consumeQueue, error) {
	q := newConsumeQueue(root, topic, queueID, perFile, nil)
	ents, err := os.ReadDir(q.dir)
	if err != nil {
		return nil, err
	}
	fb := q.fileBytes()
	var starts []int64
	for _, de := range ents {
		start, ok := parseOffsetName(de.Name())
		if !ok {
			continue
		}
		if start%fb != 0 {
			return q, fmt.Errorf("%w: %s: name is not a multiple of the file size %d", ErrCorrupt, filepath.Join(q.dir, de.Name()), fb)
		}
		starts = append(starts, start)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	var files []*mappedFile
	fail := func(err error) (*consumeQueue, error) {
		for _, f := range files {
			f.close()
		}
		return q, err
	}
	for i, start := range starts {
		if i > 0 && start != starts[i-1]+fb {
			return fail(fmt.Errorf("%w: %s: consume queue files are not contiguous", ErrCorrupt, q.dir))
		}
		m, err := openMapped(filepath.Join(q.dir, offsetName(start)), start, fb, 0)
		if err != nil {
			return fail(err)
		}
		files = append(files, m)
	}
	q.files.Store(&files)
	if len(files) == 0 {
		return q, nil
	}
	// Every entry is checked: fillers may only lead, real entries must
	// point to ascending, non-overlapping records, and the first all-zero
	// entry (only allowed in the last file) ends the queue. Sequential and
	// cheap; it catches garbage and copied entries before anyone reads them.
	first := files[0].start / cqUnit
	lastStart := files[len(files)-1].start / cqUnit
	end := files[len(files)-1].end() / cqUnit
	prevEnd := int64(-1)
scan:
	for n := first; n < end; n++ {
		e, _ := q.entry(n)
		switch {
		case e == (cqEntry{}):
			if n < lastStart {
				return fail(fmt.Errorf("%w: %s: empty entry %d inside a full file", ErrCorrupt, q.dir, n))
			}
			end = n
			break scan
		case e.filler():
			if prevEnd >= 0 {
				return fail(fmt.Errorf("%w: %s: filler entry %d after real entries", ErrCorrupt, q.dir, n))
			}
		case e.phys < max(prevEnd, 0) || e.size < message.RecordMinSize:
			return fail(fmt.Errorf("%w: %s: implausible entry %d (offset %d, size %d)", ErrCorrupt, q.dir, n, e.phys, e.size))
		default:
			prevEnd = e.phys + int64(e.size)
		}
	}
	min := end
	for n := first; n < end; n++ {
		e, _ := q.entry(n)
		if e == (cqEntry{}) {
			return fail(fmt.Errorf("%w: %s: empty entry %d inside a full file", ErrCorrupt, q.dir, n))
		}
		if !e.filler() {
			min = n
			break
		}
	}
	if min == end {
		// Nothing real survived: drop the files, the queue is empty.
		for _, f := range files {
			f.close()
			os.Remove(f.path)
		}
		q.files.Store(new([]*mappedFile))
		return q, nil
	}
	q.min.Store(min)
	q.max.Store(end)
	// Checked with every file mapped; from now on the cache maps them.
	q.cache = cache
	if cache != nil {
		for _, f := range files {
			cache.add(f)
		}
	}
	return q, nil
}
