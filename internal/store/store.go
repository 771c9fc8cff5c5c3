package store

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/atomicfile"
)

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
	guard  writeGuard // refusal after a full disk or a failed write

	segs        atomic.Pointer[[]*mappedFile] // commit-log segments, ascending
	end         atomic.Int64                  // commit-log write position
	flushed     atomic.Int64                  // synced up to here
	syncMu      sync.Mutex                    // serialises commit-log syncs
	lastStoreTs int64                         // under mu
	dirty       []*mappedFile                 // under mu: queue/index files to sync

	queues  map[queueKey]*consumeQueue // writes need mu and life
	cqCache *fileCache                 // consume-queue files open at once
	idx     indexService
	deleted map[string]int64 // topic → commit-log offset it was deleted at; under mu
	idxEnd  int64            // recovery and replicas: newest commit-log offset in the index
	rep     replicaState     // under mu: Config.Replica's dispatch cursor (ha.go)

	lockFile *os.File
	ckptFile *os.File

	bufs sync.Pool

	kick  chan struct{}
	genMu sync.Mutex
	gen   chan struct{} // closed after each sync round
	done  chan struct{}
	wg    sync.WaitGroup

	reserveMu    sync.Mutex // serialises commit-log block reservations (reserve.go); after mu
	prefaultKick chan struct{}
	prefaulted   atomic.Int64
	noPopulate   atomic.Bool

	syncs       atomic.Int64
	checkpoints atomic.Int64

	// Retention (retention.go).
	cleanMu     sync.Mutex    // one pass at a time; then mu
	retired     []retiredSeg  // under cleanMu: segments out of the list, still pinned
	cleanedMin  int64         // under cleanMu: commit-log minimum queues were cleaned to
	deleteHours []int         // DeleteWhen parsed
	releaseKick chan struct{} // the last reader of a retired segment left
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
		cqCache:      newFileCache(cfg.MaxOpenQueueFiles),
		deleted:      make(map[string]int64),
		kick:         make(chan struct{}, 1),
		prefaultKick: make(chan struct{}, 1),
		gen:          make(chan struct{}),
		done:         make(chan struct{}),
		releaseKick:  make(chan struct{}, 1),
	}
	s.deleteHours, err = parseDeleteWhen(cfg.DeleteWhen)
	if err != nil {
		return nil, err
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
	s.checkDisk()
	s.wg.Add(3)
	go s.flushLoop()
	go s.checkpointLoop()
	if cfg.CleanResourceInterval > 0 {
		s.wg.Add(1)
		go s.retentionLoop()
	}
	go s.guardLoop()
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
	locked, err := tryLock(lf)
	if err != nil {
		return fmt.Errorf("rocketmq: store: lock %s: %w", s.dirPath("lock"), err)
	}
	if !locked {
		return fmt.Errorf("%w: %s", ErrLocked, s.cfg.Dir)
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
	if err := atomicfile.WriteSynced(s.dirPath("abort"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("rocketmq: store: create abort file: %w", err)
	}
	_ = atomicfile.SyncDir(s.cfg.Dir)
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
		s.lockFile.Close() // releases the lock
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
	s.cleanMu.Lock() // a Clean of another goroutine ends at its next step
	defer s.cleanMu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if clean {
		err = s.checkpointNow()
	}
	s.life.Lock()
	s.release()
	s.releaseRetired()
	s.life.Unlock()
	if clean && err == nil {
		if rerr := os.Remove(s.dirPath("abort")); rerr != nil && !os.IsNotExist(rerr) {
			err = rerr
		}
		_ = atomicfile.SyncDir(s.cfg.Dir)
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

func offsetName(off int64) string { return fmt.Sprintf("%020d", off) }

func parseOffsetName(name string) (int64, bool) {
	if len(name) != 20 || !allDigits(name) {
		return 0, false
	}
	v, err := strconv.ParseInt(name, 10, 64)
	return v, err == nil
}
