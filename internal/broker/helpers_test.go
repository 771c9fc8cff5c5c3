package broker

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// startBroker starts a broker with cfg; it is closed at cleanup (a second
// Close is a no-op, so tests may close or crash it themselves).
func startBroker(t testing.TB, cfg Config) *Broker {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := b.Start(); err != nil {
		b.Close(context.Background())
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("broker Close: %v", err)
		}
	})
	return b
}

// rawConn is a TCP connection that writes captured frames as they are and
// reads responses with the frame codec only.
type rawConn struct {
	net.Conn
	buf []byte
}

func (c *rawConn) read(d time.Duration) (*remoting.Command, error) {
	c.SetReadDeadline(time.Now().Add(d))
	var tmp [64 << 10]byte
	for {
		cmd, n, err := remoting.DecodeFrame(c.buf, remoting.DefaultMaxFrameSize)
		if err == nil {
			c.buf = c.buf[n:]
			return cmd, nil
		}
		if !errors.Is(err, remoting.ErrIncomplete) {
			return nil, err
		}
		k, err := c.Read(tmp[:])
		c.buf = append(c.buf, tmp[:k]...)
		if err != nil {
			return nil, err
		}
	}
}
