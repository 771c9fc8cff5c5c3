package ha

import (
	"bufio"
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

// Replica is a slave's commit log.
type Replica interface {
	// CommitLogMaxOffset is the write position (0 when empty).
	CommitLogMaxOffset() int64
	// AppendReplica writes the master's bytes data at the master's offset
	// off, which must be the write position (any offset when empty).
	AppendReplica(off int64, data []byte) error
}

// ErrOffsetMismatch: the master sent a chunk for another offset than the
// slave's write position; the slave drops the connection and reconnects,
// reporting its offset again.
var ErrOffsetMismatch = errors.New("rocketmq: ha: master offset differs from the slave's")

// SlaveConfig configures a Slave. Zero fields take the defaults shown.
type SlaveConfig struct {
	// MasterAddr returns the master's HA address, "" while unknown. It is
	// asked before every connect.
	MasterAddr func() string
	// HeartbeatInterval is haSendHeartbeatInterval (5 s): the longest time
	// between two reports.
	HeartbeatInterval time.Duration
	// HousekeepingInterval is haHousekeepingInterval (20 s): a master
	// silent this long is dropped.
	HousekeepingInterval time.Duration
	// RetryInterval separates connection attempts (5 s, as Java).
	RetryInterval time.Duration
	// MaxChunk bounds a frame's length (4 MiB, Java's read buffer); a
	// longer one drops the connection.
	MaxChunk int
	// Dial connects; default net.Dialer.DialContext with a 3 s timeout.
	Dial   func(ctx context.Context, addr string) (net.Conn, error)
	Logger *slog.Logger
}

func (c SlaveConfig) withDefaults() SlaveConfig {
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = 5 * time.Second
	}
	if c.MaxChunk <= 0 {
		c.MaxChunk = 4 << 20
	}
	if c.Dial == nil {
		d := &net.Dialer{Timeout: 3 * time.Second}
		c.Dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	if c.MasterAddr == nil {
		c.MasterAddr = func() string { return "" }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Slave replicates a master's commit log into a Replica.
type Slave struct {
	cfg SlaveConfig
	dst Replica
	log *slog.Logger

	connected atomic.String // the master's HA address while connected
	received  atomic.Int64  // bytes appended since start
	kick      chan struct{} // the master address may have changed

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewSlave starts replicating into dst; Close stops it.
func NewSlave(dst Replica, cfg SlaveConfig) *Slave {
	cfg = cfg.withDefaults()
	s := &Slave{cfg: cfg, dst: dst, log: cfg.Logger, kick: make(chan struct{}, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.run()
	return s
}

// Close stops replicating and waits for the goroutines.
func (s *Slave) Close(ctx context.Context) error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// Wake makes a waiting slave try to connect now (its master's address
// changed).
func (s *Slave) Wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Connected is the master's HA address while connected, else "".
func (s *Slave) Connected() string { return s.connected.Load() }

// Received counts the commit-log bytes appended since start.
func (s *Slave) Received() int64 { return s.received.Load() }

func (s *Slave) run() {
	defer s.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		if addr := s.cfg.MasterAddr(); addr != "" {
			if err := s.session(addr); err != nil && s.ctx.Err() == nil {
				s.log.Warn("ha: replication from master stopped", "master", addr, "err", err)
			}
		}
		t.Reset(s.cfg.RetryInterval)
		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
		case <-t.C:
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
	}
}

// session is one connection to the master: a reporter goroutine writes the
// 8-byte reports, this one reads frames and appends them.
func (s *Slave) session(addr string) error {
	dctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	conn, err := s.cfg.Dial(dctx, addr)
	cancel()
	if err != nil {
		return fmt.Errorf("rocketmq: ha: connect %s: %w", addr, err)
	}
	s.log.Info("ha: connected to master", "master", addr, "offset", s.dst.CommitLogMaxOffset())
	s.connected.Store(addr)
	defer s.connected.Store("")
	appended := make(chan struct{}, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		select {
		case <-s.ctx.Done():
		case <-stop:
		}
		conn.Close()
	}()
	go func() {
		defer wg.Done()
		if err := s.report(conn, appended, stop); err != nil {
			s.log.Debug("ha: report to master", "master", addr, "err", err)
		}
		conn.Close()
	}()
	err = s.receive(conn, appended)
	close(stop)
	wg.Wait()
	if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// report writes the max offset at once, after appends that moved it, and
// at least every heartbeat interval.
func (s *Slave) report(conn net.Conn, appended <-chan struct{}, stop <-chan struct{}) error {
	var b [ReportSize]byte
	last := int64(-1)
	lastAt := time.Time{}
	t := time.NewTicker(max(s.cfg.HeartbeatInterval/4, time.Millisecond))
	defer t.Stop()
	for {
		off := s.dst.CommitLogMaxOffset()
		if off != last || time.Since(lastAt) >= s.cfg.HeartbeatInterval {
			binary.BigEndian.PutUint64(b[:], uint64(off))
			conn.SetWriteDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
			if _, err := conn.Write(b[:]); err != nil {
				return err
			}
			last, lastAt = off, time.Now()
		}
		select {
		case <-stop:
			return nil
		case <-appended:
		case <-t.C:
		}
	}
}

// receive reads frames until the connection fails or a check does.
func (s *Slave) receive(conn net.Conn, appended chan<- struct{}) error {
	r := bufio.NewReaderSize(conn, 64<<10)
	var hdr [HeaderSize]byte
	var body []byte
	for {
		conn.SetReadDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		off := int64(binary.BigEndian.Uint64(hdr[0:8]))
		n := int32(binary.BigEndian.Uint32(hdr[8:12]))
		if n < 0 || int(n) > s.cfg.MaxChunk {
			return fmt.Errorf("rocketmq: ha: frame of %d bytes at %d (limit %d)", n, off, s.cfg.MaxChunk)
		}
		if mine := s.dst.CommitLogMaxOffset(); mine != 0 && mine != off {
			return fmt.Errorf("%w: master sends %d, slave is at %d", ErrOffsetMismatch, off, mine)
		}
		if n == 0 {
			continue // heartbeat
		}
		if cap(body) < int(n) {
			body = make([]byte, n)
		}
		body = body[:n]
		conn.SetReadDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		if err := s.dst.AppendReplica(off, body); err != nil {
			return fmt.Errorf("rocketmq: ha: append %d bytes at %d: %w", n, off, err)
		}
		s.received.Add(int64(n))
		select {
		case appended <- struct{}{}:
		default:
		}
	}
}
