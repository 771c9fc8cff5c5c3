package store

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// IndexFile layout (docs/PROTOCOL.md §10.4).
const (
	indexHeaderSize = 40
	indexSlotSize   = 4
	indexEntrySize  = 20
)

// indexFile is one mapped index file plus a mirror of its header.
type indexFile struct {
	m       *mappedFile
	slots   int64
	entries int64

	beginTs, endTs   int64
	beginPhy, endPhy int64
	slotCount, count int32
}

func (f *indexFile) full() bool { return int64(f.count) >= f.entries }

// entryPos is the file offset of entry n.
func (f *indexFile) entryPos(n int32) int64 {
	return indexHeaderSize + f.slots*indexSlotSize + int64(n)*indexEntrySize
}

func (f *indexFile) readHeader() {
	be := binary.BigEndian
	d := f.m.data
	f.beginTs = int64(be.Uint64(d[0:]))
	f.endTs = int64(be.Uint64(d[8:]))
	f.beginPhy = int64(be.Uint64(d[16:]))
	f.endPhy = int64(be.Uint64(d[24:]))
	f.slotCount = int32(be.Uint32(d[32:]))
	f.count = int32(be.Uint32(d[36:]))
	if f.count < 1 {
		f.count = 1 // entry 0 is never used
	}
}

func (f *indexFile) writeHeader() {
	be := binary.BigEndian
	d := f.m.data
	be.PutUint64(d[0:], uint64(f.beginTs))
	be.PutUint64(d[8:], uint64(f.endTs))
	be.PutUint64(d[16:], uint64(f.beginPhy))
	be.PutUint64(d[24:], uint64(f.endPhy))
	be.PutUint32(d[32:], uint32(f.slotCount))
	be.PutUint32(d[36:], uint32(f.count))
}

// put adds one entry; the caller checks full() first.
func (f *indexFile) put(keyHash int32, phys, storeTs int64) {
	be := binary.BigEndian
	d := f.m.data
	slotPos := indexHeaderSize + int64(keyHash)%f.slots*indexSlotSize
	slotValue := int32(be.Uint32(d[slotPos:]))
	if slotValue <= 0 || slotValue > f.count {
		slotValue = 0
	}
	timeDiff := int64(0)
	if f.beginTs > 0 {
		timeDiff = (storeTs - f.beginTs) / 1000
		timeDiff = max(min(timeDiff, 1<<31-1), 0)
	}
	p := f.entryPos(f.count)
	be.PutUint32(d[p:], uint32(keyHash))
	be.PutUint64(d[p+4:], uint64(phys))
	be.PutUint32(d[p+12:], uint32(timeDiff))
	be.PutUint32(d[p+16:], uint32(slotValue))
	be.PutUint32(d[slotPos:], uint32(f.count))
	if f.count <= 1 {
		f.beginPhy = phys
		f.beginTs = storeTs
	}
	if slotValue == 0 {
		f.slotCount++
	}
	f.count++
	f.endPhy = phys
	f.endTs = storeTs
	f.writeHeader()
}

func (f *indexFile) timeMatched(begin, end int64) bool {
	return (begin < f.beginTs && end > f.endTs) ||
		(begin >= f.beginTs && begin <= f.endTs) ||
		(end >= f.beginTs && end <= f.endTs)
}

// lookup walks the bucket of keyHash newest first and calls fn with the
// commit-log offset of every entry with that hash stored within
// [begin, end]; fn returns false to stop. The walk starts at entry from,
// or at the bucket's head when from is 0. It returns the entry to resume
// at after fn stopped it, 0 when the chain is done. Entries never change
// once written, so a walk may resume after more have been added.
func (f *indexFile) lookup(keyHash int32, begin, end int64, from int32, fn func(phys int64) bool) (resume int32) {
	be := binary.BigEndian
	d := f.m.data
	next := from
	if next == 0 {
		slotPos := indexHeaderSize + int64(keyHash)%f.slots*indexSlotSize
		next = int32(be.Uint32(d[slotPos:]))
	}
	if next <= 0 || next > f.count || f.count <= 1 {
		return 0
	}
	for steps := int32(0); steps < f.count; steps++ {
		p := indexHeaderSize + f.slots*indexSlotSize + int64(next)*indexEntrySize
		hash := int32(be.Uint32(d[p:]))
		phys := int64(be.Uint64(d[p+4:]))
		timeDiff := int64(int32(be.Uint32(d[p+12:])))
		prev := int32(be.Uint32(d[p+16:]))
		if timeDiff < 0 {
			return 0
		}
		t := f.beginTs + timeDiff*1000
		more := true
		if hash == keyHash && t >= begin && t <= end {
			more = fn(phys)
		}
		if prev <= 0 || prev > f.count || prev == next || t < begin {
			return 0
		}
		if !more {
			return prev
		}
		next = prev
	}
	return 0
}

// indexService owns the index files. Writers hold Store.mu and mu; queries
// hold mu for reading.
type indexService struct {
	mu      sync.RWMutex
	dir     string
	slots   int64
	entries int64
	clock   func() time.Time
	log     *slog.Logger
	files   []*indexFile
	removed int // head files dropped by retention, for queries resuming a walk
}

func (x *indexService) fileSize() int64 {
	return indexHeaderSize + x.slots*indexSlotSize + x.entries*indexEntrySize
}

// load maps the existing index files. Files of the wrong size (another
// geometry, or torn) are renamed aside: the index is derived data.
func (x *indexService) load() error {
	ents, err := os.ReadDir(x.dir)
	if err != nil {
		return err
	}
	var names []string
	for _, de := range ents {
		if len(de.Name()) == 17 && allDigits(de.Name()) {
			names = append(names, de.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(x.dir, name)
		m, err := openMapped(path, 0, x.fileSize(), 0)
		if err != nil {
			x.log.Warn("store: index file unusable, moved aside", "file", path, "err", err)
			os.Rename(path, path+".bad")
			continue
		}
		f := &indexFile{m: m, slots: x.slots, entries: x.entries}
		f.readHeader()
		if int64(f.count) > x.entries || f.slotCount < 0 || int64(f.slotCount) > x.slots {
			x.log.Warn("store: index file header is corrupt, moved aside", "file", path)
			m.close()
			os.Rename(path, path+".bad")
			continue
		}
		// Written so far: its blocks exist (reserve.go).
		m.reserved.Store(f.entryPos(f.count))
		x.files = append(x.files, f)
	}
	return nil
}

// lastEndPhy is the commit-log offset of the newest indexed message, or -1.
func (x *indexService) lastEndPhy() int64 {
	for i := len(x.files) - 1; i >= 0; i-- {
		if x.files[i].count > 1 {
			return x.files[i].endPhy
		}
	}
	return -1
}

// writable returns the file to append to, creating one when needed.
func (x *indexService) writable() (*indexFile, error) {
	if n := len(x.files); n > 0 && !x.files[n-1].full() {
		return x.files[n-1], nil
	}
	if err := os.MkdirAll(x.dir, 0o755); err != nil {
		return nil, err
	}
	t := x.clock()
	var path string
	for {
		path = filepath.Join(x.dir, t.Format("20060102150405")+fmt.Sprintf("%03d", t.Nanosecond()/1e6))
		if _, err := os.Stat(path); os.IsNotExist(err) {
			break
		}
		t = t.Add(time.Millisecond)
	}
	m, err := openMapped(path, 0, x.fileSize(), mapCreate|mapExclusive)
	if err != nil {
		return nil, err
	}
	// The header is written with the first entry, once the blocks are
	// reserved (Store.reserveIndexEntry).
	f := &indexFile{m: m, slots: x.slots, entries: x.entries, count: 1}
	x.files = append(x.files, f)
	return f, nil
}

func (x *indexService) close() {
	for _, f := range x.files {
		f.m.close()
	}
	x.files = nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
