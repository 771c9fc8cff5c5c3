package server

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Close with a deadline: once ctx ends the connections are closed while a
// handler that ignores its context still runs, and Close returns only after
// that handler has ended.
func TestCloseAfterDeadlineWaitsForHandlers(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	ended := make(chan struct{})
	s := New(Config{})
	s.Handle(codeEcho, func(context.Context, *Conn, *remoting.Command) *remoting.Command {
		close(started)
		<-release // ignores its context
		close(ended)
		return nil
	})
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	nc, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	frame, err := remoting.NewRequest(codeEcho, nil, nil).AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(frame); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("handler did not start")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	type result struct {
		err        error
		handlerRan bool // the handler had ended when Close returned
	}
	closed := make(chan result, 1)
	go func() {
		err := s.Close(ctx)
		r := result{err: err}
		select {
		case <-ended:
			r.handlerRan = true
		default:
		}
		closed <- r
	}()

	// The forced phase closes the connection although the handler runs.
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(nc); err != nil && !errors.Is(err, net.ErrClosed) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("connection still open after the deadline")
		}
	}
	// A Close that does not wait for handlers has returned by now.
	select {
	case r := <-closed:
		t.Fatalf("Close returned while a handler was running (err %v)", r.err)
	case <-time.After(time.Second):
	}
	close(release)
	var r result
	select {
	case r = <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the handler ended")
	}
	if !r.handlerRan {
		t.Error("Close returned before the handler ended")
	}
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want an error wrapping context.DeadlineExceeded", r.err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
