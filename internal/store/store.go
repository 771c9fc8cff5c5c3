package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting/message"
	"go.uber.org/atomic"
)

// FlushMode selects when appended data is forced to the device.
type FlushMode int

const (
	// FlushAsync syncs in the background every FlushInterval (Java
	// ASYNC_FLUSH). An acknowledged message is in the page cache: it
	// survives the death of the process, not of the machine.
	FlushAsync FlushMode = iota
	// FlushSync makes PutMessage with WaitFlush wait until a device sync
	// covers the record (Java SYNC_FLUSH, group commit).
	FlushSync
)

// Config configures a Store. Zero fields take the documented defaults.
type Config struct {
	// Dir is the store root (storePathRootDir). Required.
	Dir string
	// CommitLogSegmentSize is the size of each commit-log file. Default 1 GiB.
	CommitLogSegmentSize int64
	// ConsumeQueueEntriesPerFile is the number of 20-byte entries per
	// consume-queue file. Default 300000.
	ConsumeQueueEntriesPerFile int
	// IndexSlots and IndexEntries size each index file. Defaults 5000000
	// and 20000000 (420 MB files, created sparse).
	IndexSlots   int
	IndexEntries int
	// DisableIndex turns off the key index (messageIndexEnable=false).
	DisableIndex bool
	// FlushMode: FlushAsync (default) or FlushSync.
	FlushMode FlushMode
	// FlushInterval is the background commit-log sync period. Default 500 ms.
	FlushInterval time.Duration
	// SyncFlushTimeout bounds a FlushSync wait. Default 5 s.
	SyncFlushTimeout time.Duration
	// CheckpointInterval is the period of consume-queue/index syncs and
	// checkpoint writes. Default 1 s.
	CheckpointInterval time.Duration
	// MaxMessageSize is the largest body accepted. Default 4 MiB.
	MaxMessageSize int
	// MaxTransferBytes and MaxTransferCount cap one GetMessages call
	// (maxTransferBytesOnMessageInMemory/CountOnMessageInMemory). Defaults
	// 256 KiB and 32.
	MaxTransferBytes int
	MaxTransferCount int
	// MaxQueryNum caps QueryByKey results (maxMsgsNumBatch). Default 64.
	MaxQueryNum int
	// PrefaultBytes is how far ahead of the write position a background
	// goroutine faults in commit-log pages (FlushAsync only: FlushSync
	// appends use pwrite, see appendLocked). Default 1 MiB; negative
	// disables.
	PrefaultBytes int64
	// Preallocate reserves the blocks of each new commit-log segment so a
	// full disk fails an append instead of faulting. Default off (sparse
	// files, like Java's default).
	Preallocate bool
	// Logger receives store events. Default: discard.
	Logger *slog.Logger
	// Clock gives store timestamps. Default time.Now.
	Clock func() time.Time
	// OnDispatch, if set, is called after each message becomes readable
	// (outside every store lock, on the appending goroutine), so the broker
	// can wake long-polling pulls. Not called during recovery.
	OnDispatch func(DispatchEvent)
	// TagsCode computes a record's consume-queue tags code when recovery
	// rebuilds consume queues; it must agree with PutRequest.TagsCode.
	// Default: Java hashCode of the TAGS property, 0 without tags. The
	// broker overrides it for SCHEDULE_TOPIC_XXXX (delivery time).
	TagsCode func(topic string, properties []byte, storeTimestamp int64) int64
}

func (c Config) normalize() (Config, error) {
	if c.Dir == "" {
		return c, errors.New("rocketmq: store: Config.Dir is required")
	}
	setDefault(&c.CommitLogSegmentSize, 1<<30)
	setDefault(&c.ConsumeQueueEntriesPerFile, 300000)
	setDefault(&c.IndexSlots, 5000000)
	setDefault(&c.IndexEntries, 20000000)
	setDefault(&c.FlushInterval, 500*time.Millisecond)
	setDefault(&c.SyncFlushTimeout, 5*time.Second)
	setDefault(&c.CheckpointInterval, time.Second)
	setDefault(&c.MaxMessageSize, 4<<20)
	setDefault(&c.MaxTransferBytes, 256<<10)
	setDefault(&c.MaxTransferCount, 32)
	setDefault(&c.MaxQueryNum, 64)
	if c.PrefaultBytes == 0 {
		c.PrefaultBytes = 1 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.TagsCode == nil {
		c.TagsCode = defaultTagsCode
	}
	switch {
	case c.CommitLogSegmentSize < 1024:
		return c, fmt.Errorf("rocketmq: store: CommitLogSegmentSize %d is below 1024", c.CommitLogSegmentSize)
	case c.IndexEntries < 2:
		return c, fmt.Errorf("rocketmq: store: IndexEntries %d is below 2", c.IndexEntries)
	case c.FlushMode != FlushAsync && c.FlushMode != FlushSync:
		return c, fmt.Errorf("rocketmq: store: unknown FlushMode %d", c.FlushMode)
	}
	return c, nil
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// PutRequest is one message to append. QueueOffset, PhysicalOffset and
// StoreTimestamp of the embedded fields are ignored: the store assigns them.
type PutRequest struct {
	message.RecordFields
	// TagsCode goes into the consume-queue entry (see Config.TagsCode).
	TagsCode int64
	// UniqKey (UNIQ_KEY) and Keys (KEYS, space separated) are indexed.
	UniqKey string
	Keys    string
	// WaitFlush (the WAIT property) makes a FlushSync store wait for the
	// device sync before returning.
	WaitFlush bool
}

// PutStatus is the outcome of a stored put (Java PutMessageStatus).
type PutStatus int

const (
	PutOK PutStatus = iota
	// PutFlushDiskTimeout: stored and readable, but the sync did not finish
	// within SyncFlushTimeout (or ctx ended first).
	PutFlushDiskTimeout
)

func (s PutStatus) String() string {
	switch s {
	case PutOK:
		return "PUT_OK"
	case PutFlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	}
	return "PutStatus(" + strconv.Itoa(int(s)) + ")"
}

// PutResult describes an appended message or batch.
type PutResult struct {
	Status PutStatus
	// PhysicalOffset and QueueOffset are those of the first record.
	PhysicalOffset int64
	QueueOffset    int64
	StoreTimestamp int64
	// WroteBytes is the total record size; MsgCount the number of records.
	WroteBytes int
	MsgCount   int
	// PhysicalOffsets has each record's offset (batches only).
	PhysicalOffsets []int64
}

// End is the commit-log offset just past the records: they are durable
// once FlushProgress reports at least End.
func (r *PutResult) End() int64 { return r.PhysicalOffset + int64(r.WroteBytes) }

// DispatchEvent tells that a message became readable in its queue.
type DispatchEvent struct {
	Topic          string
	QueueID        int32
	QueueOffset    int64
	TagsCode       int64
	PhysicalOffset int64
	StoreTimestamp int64
}

// Stats are cumulative counters.
type Stats struct {
	// CommitLogSyncs counts device syncs of commit-log files.
	CommitLogSyncs int64
	// Checkpoints counts checkpoint writes.
	Checkpoints int64
}

type queueKey struct {
	topic string
	id    int32
}

// Store is a RocketMQ-layout message store. All methods are safe for
// concurrent use.
//
// Lock order: mu, then life, then idx.mu. Readers take only life (shared)
// and idx.mu; appends take mu (and idx.mu); unmapping anything takes life
// exclusively.
type Store struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex   // the single writer
	life   sync.RWMutex // readers share it; closing or unmapping holds it
	closed atomic.Bool
	failed error // under mu: after a failed write nothing more is appended

	segs        atomic.Pointer[[]*mappedFile] // commit-log segments, ascending
	end         atomic.Int64                  // commit-log write position
	flushed     atomic.Int64                  // synced up to here
	syncMu      sync.Mutex                    // serialises commit-log syncs
	lastStoreTs int64                         // under mu
	dirty       []*mappedFile                 // under mu: queue/index files to sync

	queues  map[queueKey]*consumeQueue // writes need mu and life
	idx     indexService
	deleted map[string]int64 // topic → commit-log offset it was deleted at; under mu
	idxEnd  int64            // recovery only: newest commit-log offset in the index

	lockFile *os.File
	ckptFile *os.File

	bufs sync.Pool

	kick  chan struct{}
	genMu sync.Mutex
	gen   chan struct{} // closed after each sync round
	done  chan struct{}
	wg    sync.WaitGroup

	prefaultKick chan struct{}
	prefaulted   atomic.Int64
	noPopulate   atomic.Bool

	syncs       atomic.Int64
	checkpoints atomic.Int64
}

func (s *Store) dirPath(parts ...string) string {
	return filepath.Join(append([]string{s.cfg.Dir}, parts...)...)
}

// Open opens the store in cfg.Dir (creating it), takes the directory lock,
// recovers after a crash, and starts the background flushing.
func Open(cfg Config) (*Store, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	s := &Store{
		cfg:          cfg,
		log:          cfg.Logger,
		queues:       make(map[queueKey]*consumeQueue),
		deleted:      make(map[string]int64),
		kick:         make(chan struct{}, 1),
		prefaultKick: make(chan struct{}, 1),
		gen:          make(chan struct{}),
		done:         make(chan struct{}),
	}
	s.segs.Store(new([]*mappedFile))
	s.idx = indexService{
		dir:     s.dirPath("index"),
		slots:   int64(cfg.IndexSlots),
		entries: int64(cfg.IndexEntries),
		clock:   cfg.Clock,
		log:     cfg.Logger,
	}
	if err := s.open(); err != nil {
		s.release()
		return nil, err
	}
	s.wg.Add(2)
	go s.flushLoop()
	go s.checkpointLoop()
	if s.prefaults() {
		s.wg.Add(1)
		go s.prefaultLoop()
		s.kickPrefault(s.end.Load())
	}
	return s, nil
}

func (s *Store) open() (err error) {
	// A file shrunk behind our back faults on access; report it instead.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	for _, d := range []string{"", "commitlog", "consumequeue", "index"} {
		if err := os.MkdirAll(s.dirPath(d), 0o755); err != nil {
			return fmt.Errorf("rocketmq: store: create %s: %w", s.dirPath(d), err)
		}
	}
	lf, err := os.OpenFile(s.dirPath("lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("rocketmq: store: open lock file: %w", err)
	}
	s.lockFile = lf
	var lerr error
	if err := rawControl(lf, func(fd uintptr) { lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) }); err != nil {
		return fmt.Errorf("rocketmq: store: lock: %w", err)
	}
	if lerr != nil {
		if errors.Is(lerr, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s", ErrLocked, s.cfg.Dir)
		}
		return fmt.Errorf("rocketmq: store: lock %s: %w", s.dirPath("lock"), lerr)
	}
	_, err = os.Stat(s.dirPath("abort"))
	abnormal := err == nil
	s.ckptFile, err = os.OpenFile(s.dirPath("checkpoint"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("rocketmq: store: open checkpoint: %w", err)
	}
	ckpt, err := readCheckpoint(s.ckptFile)
	if err != nil {
		return err
	}
	if err := s.loadDeleted(); err != nil {
		return err
	}
	torn, err := s.loadSegments()
	if err != nil {
		return err
	}
	needDeep, err := s.loadQueues()
	if err != nil {
		return err
	}
	if !s.cfg.DisableIndex {
		if err := s.idx.load(); err != nil {
			return fmt.Errorf("rocketmq: store: load index: %w", err)
		}
	}
	// The abort file marks a running store; a crash during recovery must
	// again cause an abnormal recovery.
	if err := writeFileSync(s.dirPath("abort"), []byte(strconv.Itoa(os.Getpid()))); err != nil {
		return fmt.Errorf("rocketmq: store: create abort file: %w", err)
	}
	syncDir(s.cfg.Dir)
	return s.recover(abnormal || torn, needDeep, ckpt)
}

// release closes files after a failed open, a Close or a Crash.
func (s *Store) release() {
	for _, m := range *s.segs.Load() {
		m.close()
	}
	s.segs.Store(new([]*mappedFile))
	for _, q := range s.queues {
		q.close()
	}
	s.queues = map[queueKey]*consumeQueue{}
	s.idx.close()
	if s.ckptFile != nil {
		s.ckptFile.Close()
	}
	if s.lockFile != nil {
		s.lockFile.Close() // releases the flock
	}
}

// Close flushes everything, writes the checkpoint, removes the abort file
// and releases the directory. Later calls return ErrClosed.
func (s *Store) Close() error {
	return s.shutdown(true)
}

// Crash stops the store the way a killed process would: no sync, no
// checkpoint, the abort file stays. Data already appended is in the page
// cache and survives. For fault-injection tests.
func (s *Store) Crash() error {
	return s.shutdown(false)
}

func (s *Store) shutdown(clean bool) error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed.Store(true)
	s.mu.Unlock()
	close(s.done)
	s.wg.Wait()

	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if clean {
		err = s.checkpointNow()
	}
	s.life.Lock()
	s.release()
	s.life.Unlock()
	if clean && err == nil {
		if rerr := os.Remove(s.dirPath("abort")); rerr != nil && !os.IsNotExist(rerr) {
			err = rerr
		}
		syncDir(s.cfg.Dir)
	}
	s.genMu.Lock()
	close(s.gen) // wake sync waiters; they see closed
	s.gen = make(chan struct{})
	s.genMu.Unlock()
	return err
}

// Stats returns the counters.
func (s *Store) Stats() Stats {
	return Stats{CommitLogSyncs: s.syncs.Load(), Checkpoints: s.checkpoints.Load()}
}

func (s *Store) now() int64 { return s.cfg.Clock().UnixMilli() }

// markDirty records a queue or index file for the next checkpoint sync.
// Caller holds mu.
func (s *Store) markDirty(f *mappedFile) {
	if !f.dirty {
		f.dirty = true
		s.dirty = append(s.dirty, f)
	}
}

// validTopic rejects topics that cannot be a directory name.
func validTopic(t string) bool {
	if t == "" || t == "." || t == ".." || len(t) > 32767 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c == '/' || c == '\\' || c == 0 {
			return false
		}
	}
	return true
}

func isDispatched(sysFlag int32) bool {
	t := sysFlag & message.FlagTransactionMask
	return t != message.FlagTransactionPrep && t != message.FlagTransactionRoll
}

// recMeta is one record of an append: its place in the encode buffer and,
// after the append, its offsets.
type recMeta struct {
	req        *PutRequest
	off, size  int
	sysFlag    int32
	phys, qo   int64
	dispatched bool
}

func (s *Store) checkRequest(r *PutRequest) error {
	if !validTopic(r.Topic) {
		return fmt.Errorf("%w: topic %q", ErrInvalidMessage, r.Topic)
	}
	if r.QueueID < 0 {
		return fmt.Errorf("%w: queue id %d", ErrInvalidMessage, r.QueueID)
	}
	if len(r.Body) > s.cfg.MaxMessageSize {
		return fmt.Errorf("%w: body of %d bytes exceeds %d", ErrMessageTooLarge, len(r.Body), s.cfg.MaxMessageSize)
	}
	return nil
}

const maxPooledBuf = 1 << 20

func (s *Store) getBuf() *[]byte {
	if b, ok := s.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4096)
	return &b
}

func (s *Store) putBuf(p *[]byte, b []byte) {
	if cap(b) <= maxPooledBuf {
		*p = b[:0]
		s.bufs.Put(p)
	}
}

// PutMessage appends one message, dispatches it to its consume queue and
// the index, and (FlushSync with WaitFlush) waits for the device sync.
// When it returns without error the message is readable.
func (s *Store) PutMessage(ctx context.Context, req *PutRequest) (PutResult, error) {
	if err := s.checkRequest(req); err != nil {
		return PutResult{}, err
	}
	bp := s.getBuf()
	buf, sys, err := req.RecordFields.AppendRecord((*bp)[:0])
	if err != nil {
		s.putBuf(bp, buf)
		return PutResult{}, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	metas := [1]recMeta{{req: req, size: len(buf), sysFlag: sys}}
	s.mu.Lock()
	res, err := s.appendLocked(buf, metas[:])
	s.mu.Unlock()
	s.putBuf(bp, buf)
	if err != nil {
		return PutResult{}, err
	}
	s.afterPut(ctx, metas[:], &res, req.WaitFlush)
	return res, nil
}

// PutMessages appends a batch to one queue as consecutive records with
// consecutive queue offsets, all in one commit-log segment.
func (s *Store) PutMessages(ctx context.Context, reqs []PutRequest) (PutResult, error) {
	if len(reqs) == 0 {
		return PutResult{}, fmt.Errorf("%w: empty batch", ErrInvalidMessage)
	}
	metas := make([]recMeta, len(reqs))
	bp := s.getBuf()
	buf := (*bp)[:0]
	wait := false
	for i := range reqs {
		r := &reqs[i]
		if err := s.checkRequest(r); err != nil {
			s.putBuf(bp, buf)
			return PutResult{}, err
		}
		if r.Topic != reqs[0].Topic || r.QueueID != reqs[0].QueueID {
			s.putBuf(bp, buf)
			return PutResult{}, fmt.Errorf("%w: batch mixes queues", ErrInvalidMessage)
		}
		off := len(buf)
		var sys int32
		var err error
		buf, sys, err = r.RecordFields.AppendRecord(buf)
		if err != nil {
			s.putBuf(bp, buf)
			return PutResult{}, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
		}
		metas[i] = recMeta{req: r, off: off, size: len(buf) - off, sysFlag: sys}
		wait = wait || r.WaitFlush
	}
	s.mu.Lock()
	res, err := s.appendLocked(buf, metas)
	s.mu.Unlock()
	s.putBuf(bp, buf)
	if err != nil {
		return PutResult{}, err
	}
	res.PhysicalOffsets = make([]int64, len(metas))
	for i := range metas {
		res.PhysicalOffsets[i] = metas[i].phys
	}
	s.afterPut(ctx, metas, &res, wait)
	return res, nil
}

// appendLocked writes the encoded records in buf at the end of the commit
// log, patching in their offsets and store time, and dispatches them.
// Everything that can fail is done before the first byte is written.
func (s *Store) appendLocked(buf []byte, metas []recMeta) (res PutResult, err error) {
	if s.closed.Load() {
		return res, ErrClosed
	}
	if s.failed != nil {
		return res, s.failed
	}
	total := int64(len(buf))
	if total+message.BlankMinSize > s.cfg.CommitLogSegmentSize {
		return res, fmt.Errorf("%w: %d bytes do not fit a %d-byte commit-log segment", ErrMessageTooLarge, total, s.cfg.CommitLogSegmentSize)
	}
	defer s.noteWriteFailure(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	first := metas[0].req
	var q *consumeQueue
	var qo int64
	n := int64(0)
	for i := range metas {
		if isDispatched(metas[i].sysFlag) {
			n++
		}
	}
	if n > 0 {
		if q, err = s.queueLocked(first.Topic, first.QueueID); err != nil {
			return res, err
		}
		qo = q.max.Load()
		if err = q.ensure(qo+n-1, s); err != nil {
			return res, err
		}
	}
	seg, err := s.segmentForAppend(total)
	if err != nil {
		return res, err
	}
	storeTs := s.now()
	phys := s.end.Load()
	be := binary.BigEndian
	for i := range metas {
		m := &metas[i]
		b := buf[m.off : m.off+m.size]
		m.phys = phys + int64(m.off)
		if isDispatched(m.sysFlag) {
			m.qo, m.dispatched = qo, true
			qo++
		}
		be.PutUint64(b[message.RecordPosQueueOffset:], uint64(m.qo))
		be.PutUint64(b[message.RecordPosPhysicalOffset:], uint64(m.phys))
		be.PutUint64(b[message.StoreTimestampPos(m.sysFlag):], uint64(storeTs))
	}
	// The size field goes last: a process killed mid-copy leaves a record
	// that recovery sees as the end of the log.
	pos := phys - seg.start
	if s.cfg.FlushMode == FlushSync {
		// With pwrite, not through the mapping: the group commit's
		// fdatasync then takes about a fifth of the time, and a sync-flush
		// send waits for it (BenchmarkSyncAfterWrite32KiB; pages faulted
		// into the mapping beforehand made the broker slower again, so
		// nothing is prefaulted). Readers still see the bytes through the
		// mapping.
		if err = seg.writeAt(buf[4:], pos+4); err == nil {
			err = seg.writeAt(buf[:4], pos)
		}
		if err != nil {
			return res, err
		}
	} else {
		copy(seg.data[pos+4:], buf[4:])
		copy(seg.data[pos:pos+4], buf[:4])
	}
	s.end.Store(phys + total)
	s.lastStoreTs = storeTs
	if s.prefaults() {
		s.kickPrefault(phys + total)
	}

	for i := range metas {
		m := &metas[i]
		if m.dispatched {
			q.put(m.qo, cqEntry{phys: m.phys, size: int32(m.size), tags: m.req.TagsCode}, s)
		}
	}
	if !s.cfg.DisableIndex {
		s.idx.mu.Lock()
		for i := range metas {
			m := &metas[i]
			if m.sysFlag&message.FlagTransactionMask != message.FlagTransactionRoll {
				s.indexRecordLocked(first.Topic, m.req.UniqKey, m.req.Keys, m.phys, storeTs)
			}
		}
		s.idx.mu.Unlock()
	}
	res = PutResult{
		PhysicalOffset: phys,
		QueueOffset:    metas[0].qo,
		StoreTimestamp: storeTs,
		WroteBytes:     int(total),
		MsgCount:       len(metas),
	}
	return res, nil
}

// noteWriteFailure stops appends after an I/O failure that may have left a
// partial write behind. Caller holds mu.
func (s *Store) noteWriteFailure(err *error) {
	if *err != nil && (errors.Is(*err, errFault) || errors.Is(*err, errWrite)) && s.failed == nil {
		s.failed = *err
		s.log.Error("store: write failed, appends disabled", "err", *err)
	}
}

// indexRecordLocked adds the index entries of one message. Index trouble is
// logged, never fatal: the index is derived data. Caller holds mu, idx.mu.
func (s *Store) indexRecordLocked(topic, uniq, keys string, phys, storeTs int64) {
	if uniq != "" {
		s.indexKeyLocked(indexKeyHash(topic, uniq), phys, storeTs)
	}
	for len(keys) > 0 {
		i := 0
		for i < len(keys) && keys[i] != ' ' {
			i++
		}
		if i > 0 {
			s.indexKeyLocked(indexKeyHash(topic, keys[:i]), phys, storeTs)
		}
		if i == len(keys) {
			break
		}
		keys = keys[i+1:]
	}
}

func (s *Store) indexKeyLocked(hash int32, phys, storeTs int64) {
	f, err := s.idx.writable()
	if err != nil {
		s.log.Error("store: cannot create index file", "err", err)
		return
	}
	f.put(hash, phys, storeTs)
	s.markDirty(f.m)
}

// segmentForAppend returns the segment the next total bytes go to, rolling
// to a new one (after writing the blank end marker) when they do not fit.
func (s *Store) segmentForAppend(total int64) (*mappedFile, error) {
	segs := *s.segs.Load()
	end := s.end.Load()
	if len(segs) > 0 {
		seg := segs[len(segs)-1]
		if end < seg.end() && end+total+message.BlankMinSize <= seg.end() {
			return seg, nil
		}
	}
	next, err := s.newSegment(end)
	if err != nil {
		return nil, err
	}
	if len(segs) > 0 {
		seg := segs[len(segs)-1]
		if pos := end - seg.start; pos+message.BlankMinSize <= int64(len(seg.data)) {
			binary.BigEndian.PutUint32(seg.data[pos+4:], uint32(blankMagic))
			binary.BigEndian.PutUint32(seg.data[pos:], uint32(int64(len(seg.data))-pos))
		}
	}
	s.end.Store(next.start)
	return next, nil
}

// newSegment creates the commit-log file starting where the last one ends.
func (s *Store) newSegment(after int64) (*mappedFile, error) {
	segs := *s.segs.Load()
	start := after
	if len(segs) > 0 {
		start = segs[len(segs)-1].end()
	}
	opts := mapCreate | mapExclusive
	if s.cfg.Preallocate {
		opts |= mapPreallocate
	}
	m, err := openMapped(s.dirPath("commitlog", offsetName(start)), start, s.cfg.CommitLogSegmentSize, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: create commit-log segment: %v", ErrIO, err)
	}
	grown := append(append(make([]*mappedFile, 0, len(segs)+1), segs...), m)
	s.segs.Store(&grown)
	return m, nil
}

// queueLocked returns the queue, creating its (fileless) object if needed.
// Caller holds mu.
func (s *Store) queueLocked(topic string, id int32) (*consumeQueue, error) {
	k := queueKey{topic, id}
	if q := s.queues[k]; q != nil {
		return q, nil
	}
	if !validTopic(topic) || id < 0 {
		return nil, fmt.Errorf("%w: queue %s/%d", ErrInvalidMessage, topic, id)
	}
	q := newConsumeQueue(s.dirPath("consumequeue"), topic, id, int64(s.cfg.ConsumeQueueEntriesPerFile))
	s.life.Lock()
	s.queues[k] = q
	s.life.Unlock()
	return q, nil
}

// afterPut runs the dispatch callbacks and the sync wait, outside all locks.
func (s *Store) afterPut(ctx context.Context, metas []recMeta, res *PutResult, wait bool) {
	if cb := s.cfg.OnDispatch; cb != nil {
		for i := range metas {
			m := &metas[i]
			if m.dispatched {
				cb(DispatchEvent{
					Topic:          m.req.Topic,
					QueueID:        m.req.QueueID,
					QueueOffset:    m.qo,
					TagsCode:       m.req.TagsCode,
					PhysicalOffset: m.phys,
					StoreTimestamp: res.StoreTimestamp,
				})
			}
		}
	}
	if s.cfg.FlushMode == FlushSync {
		target := res.End()
		if !wait {
			s.wakeFlusher()
			return
		}
		if !s.waitFlushed(ctx, target) {
			res.Status = PutFlushDiskTimeout
		}
	}
}

func offsetName(off int64) string { return fmt.Sprintf("%020d", off) }

func parseOffsetName(name string) (int64, bool) {
	if len(name) != 20 || !allDigits(name) {
		return 0, false
	}
	v, err := strconv.ParseInt(name, 10, 64)
	return v, err == nil
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
