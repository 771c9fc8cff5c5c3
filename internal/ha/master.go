package ha

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"go.uber.org/atomic"
)

// HeaderSize is the size of a transfer frame's header: the int64 commit-log
// offset the chunk starts at and its int32 length.
const HeaderSize = 8 + 4

// ReportSize is the size of a slave's report: its int64 max offset.
const ReportSize = 8

// Source is the master's commit log.
type Source interface {
	// CommitLogMaxOffset is the write position.
	CommitLogMaxOffset() int64
	// CommitLogSegmentSize is the size of each commit-log file.
	CommitLogSegmentSize() int64
	// ReadCommitLog appends to dst at most max bytes from off on, never
	// crossing a file end or the write position; none at the write
	// position.
	ReadCommitLog(dst []byte, off int64, max int) ([]byte, error)
}

// MasterConfig configures a Master. Zero fields take the defaults shown.
type MasterConfig struct {
	// HeartbeatInterval is haSendHeartbeatInterval (5 s): an idle
	// connection gets an empty frame this often.
	HeartbeatInterval time.Duration
	// HousekeepingInterval is haHousekeepingInterval (20 s): a slave that
	// sends nothing this long is dropped; it also bounds each write.
	HousekeepingInterval time.Duration
	// BatchSize is haTransferBatchSize (32 KiB): the largest chunk.
	BatchSize int
	// MaxConns bounds the slave connections (16); more are closed at once.
	MaxConns int
	// PollInterval is how often an idle connection looks for new data it
	// was not told about (100 ms, Java's wait).
	PollInterval time.Duration
	Logger       *slog.Logger
}

func (c MasterConfig) withDefaults() MasterConfig {
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 32 << 10
	}
	if c.MaxConns <= 0 {
		c.MaxConns = 16
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 100 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Master serves slaves on the HA port.
//
// Locks: mu guards conns and closed; ackMu guards ackGen. They never nest.
type Master struct {
	cfg MasterConfig
	src Source
	ln  net.Listener
	log *slog.Logger

	mu     sync.Mutex
	conns  map[*masterConn]struct{}
	closed bool
	snap   atomic.Pointer[[]*masterConn] // conns, for Notify without mu

	acked  atomic.Int64 // push2SlaveMaxOffset: the highest offset any slave acknowledged
	ackMu  sync.Mutex
	ackGen chan struct{} // closed when acked grows

	done chan struct{}
	wg   sync.WaitGroup
}

// NewMaster serves slaves on ln until Close; it owns ln from now on.
func NewMaster(src Source, ln net.Listener, cfg MasterConfig) *Master {
	cfg = cfg.withDefaults()
	m := &Master{cfg: cfg, src: src, ln: ln, log: cfg.Logger, conns: make(map[*masterConn]struct{}),
		ackGen: make(chan struct{}), done: make(chan struct{})}
	m.snap.Store(new([]*masterConn))
	m.wg.Add(1)
	go m.accept()
	return m
}

// Addr is the listener's address.
func (m *Master) Addr() string { return m.ln.Addr().String() }

// Close stops accepting, drops every slave and waits for every goroutine;
// ctx is not needed for any wait longer than a socket close.
func (m *Master) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.done)
	for c := range m.conns {
		c.conn.Close()
	}
	m.mu.Unlock()
	err := m.ln.Close()
	waited := make(chan struct{})
	go func() { m.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		<-waited // every goroutine ends once its socket is closed
	}
	m.ackMu.Lock()
	close(m.ackGen)
	m.ackGen = make(chan struct{})
	m.ackMu.Unlock()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Notify tells the connections that the commit log grew. It never blocks;
// the appending goroutine calls it.
func (m *Master) Notify() {
	for _, c := range *m.snap.Load() {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// Acked returns the highest offset a slave has acknowledged and a channel
// closed when it grows (or at Close).
func (m *Master) Acked() (int64, <-chan struct{}) {
	m.ackMu.Lock()
	g := m.ackGen
	m.ackMu.Unlock()
	return m.acked.Load(), g
}

// SlaveOK is HAService.isSlaveOK: a slave is connected and the
// acknowledged offset is less than fallBehindMax behind putWhere.
func (m *Master) SlaveOK(putWhere, fallBehindMax int64) bool {
	return len(*m.snap.Load()) > 0 && putWhere-m.acked.Load() < fallBehindMax
}

// SlaveInfo describes one connected slave.
type SlaveInfo struct {
	Addr string
	// Acked is the max offset the slave last reported; -1 before its
	// first report.
	Acked int64
}

// Slaves lists the connected slaves.
func (m *Master) Slaves() []SlaveInfo {
	var out []SlaveInfo
	for _, c := range *m.snap.Load() {
		out = append(out, SlaveInfo{Addr: c.conn.RemoteAddr().String(), Acked: c.acked.Load()})
	}
	return out
}

func (m *Master) noteAck(off int64) {
	for {
		cur := m.acked.Load()
		if off <= cur {
			return
		}
		if m.acked.CompareAndSwap(cur, off) {
			break
		}
	}
	m.ackMu.Lock()
	close(m.ackGen)
	m.ackGen = make(chan struct{})
	m.ackMu.Unlock()
}

func (m *Master) accept() {
	defer m.wg.Done()
	for {
		conn, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			m.log.Warn("ha: accept", "err", err)
			select {
			case <-m.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		m.add(conn)
	}
}

// masterConn is one slave. Its reader and writer goroutines end when
// either fails or the master closes; the last one out removes it.
type masterConn struct {
	m      *Master
	conn   net.Conn
	acked  atomic.Int64  // last report; -1 before the first
	first  chan struct{} // closed at the first report
	wake   chan struct{} // the commit log grew
	closed chan struct{}
	once   sync.Once
}

func (m *Master) add(conn net.Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || len(m.conns) >= m.cfg.MaxConns {
		if !m.closed {
			m.log.Warn("ha: too many slave connections, closing", "remote", conn.RemoteAddr().String(), "max", m.cfg.MaxConns)
		}
		conn.Close()
		return
	}
	c := &masterConn{m: m, conn: conn, first: make(chan struct{}), wake: make(chan struct{}, 1), closed: make(chan struct{})}
	c.acked.Store(-1)
	m.conns[c] = struct{}{}
	m.publishLocked()
	m.log.Info("ha: slave connected", "remote", conn.RemoteAddr().String())
	var left sync.WaitGroup
	left.Add(2)
	m.wg.Add(3)
	go func() { defer m.wg.Done(); defer left.Done(); c.read() }()
	go func() { defer m.wg.Done(); defer left.Done(); c.write() }()
	go func() {
		defer m.wg.Done()
		left.Wait()
		m.mu.Lock()
		delete(m.conns, c)
		m.publishLocked()
		m.mu.Unlock()
		m.log.Info("ha: slave disconnected", "remote", conn.RemoteAddr().String())
	}()
}

func (m *Master) publishLocked() {
	s := make([]*masterConn, 0, len(m.conns))
	for c := range m.conns {
		s = append(s, c)
	}
	m.snap.Store(&s)
}

func (c *masterConn) close(why string, err error) {
	c.once.Do(func() {
		if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
			c.m.log.Warn("ha: dropping slave", "remote", c.conn.RemoteAddr().String(), "why", why, "err", err)
		}
		close(c.closed)
		c.conn.Close()
	})
}

// read takes the slave's 8-byte reports; of several read at once only the
// last whole one counts, as in Java.
func (c *masterConn) read() {
	var buf [1024]byte
	have := 0
	for {
		c.conn.SetReadDeadline(time.Now().Add(c.m.cfg.HousekeepingInterval))
		n, err := c.conn.Read(buf[have:])
		if err != nil {
			c.close("read", err)
			return
		}
		have += n
		whole := have / ReportSize * ReportSize
		if whole == 0 {
			continue
		}
		off := int64(binary.BigEndian.Uint64(buf[whole-ReportSize : whole]))
		have = copy(buf[:], buf[whole:have])
		if max := c.m.src.CommitLogMaxOffset(); off < 0 || off > max {
			c.close("report", fmt.Errorf("slave reports offset %d, beyond the master's %d", off, max))
			return
		}
		if c.acked.Swap(off) < 0 {
			close(c.first)
		}
		c.m.noteAck(off)
	}
}

// write streams the commit log from where the first report says.
func (c *masterConn) write() {
	select {
	case <-c.first:
	case <-c.closed:
		return
	}
	next := c.acked.Load()
	if next == 0 {
		// An empty slave starts at the master's last file, not at 0.
		max := c.m.src.CommitLogMaxOffset()
		next = max - max%c.m.src.CommitLogSegmentSize()
	}
	cfg := &c.m.cfg
	buf := make([]byte, HeaderSize, HeaderSize+cfg.BatchSize)
	lastWrite := time.Now()
	timer := time.NewTimer(cfg.PollInterval)
	defer timer.Stop()
	for {
		chunk, err := c.m.src.ReadCommitLog(buf[:HeaderSize], next, cfg.BatchSize)
		if err != nil {
			c.close("read commit log", err)
			return
		}
		n := len(chunk) - HeaderSize
		if n == 0 && time.Since(lastWrite) < cfg.HeartbeatInterval {
			wait := min(cfg.PollInterval, cfg.HeartbeatInterval-time.Since(lastWrite))
			timer.Reset(wait)
			select {
			case <-c.closed:
				return
			case <-c.wake:
			case <-timer.C:
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			continue
		}
		binary.BigEndian.PutUint64(chunk[0:8], uint64(next))
		binary.BigEndian.PutUint32(chunk[8:12], uint32(n))
		c.conn.SetWriteDeadline(time.Now().Add(cfg.HousekeepingInterval))
		if _, err := c.conn.Write(chunk); err != nil {
			c.close("write", err)
			return
		}
		next += int64(n)
		lastWrite = time.Now()
	}
}
