// Package fakepeer is a scripted remoting peer for tests: a listener on
// 127.0.0.1:0 that answers each request with what a handler returns and can
// push requests to its clients. Client packages test against it without
// importing the in-repo servers.
package fakepeer

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Server is a minimal remoting peer on 127.0.0.1:0: it answers each
// request with handle's reply (nil: none) on its own goroutine, so a held
// request does not stop the connection, and can push requests to every
// connected client.
type Server struct {
	ln     net.Listener
	handle func(req *remoting.Command) *remoting.Command

	mu    sync.Mutex
	conns []net.Conn
	calls map[int32]int
	resps map[int32]*remoting.Command // client responses to pushed requests, by opaque
	wg    sync.WaitGroup
}

// New starts a Server; it is closed at t's cleanup.
func New(t testing.TB, handle func(req *remoting.Command) *remoting.Command) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln, handle: handle, calls: map[int32]int{}, resps: map[int32]*remoting.Command{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Count is how many requests with code arrived.
func (s *Server) Count(code int32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[code]
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	r := bufio.NewReader(c)
	var buf []byte
	tmp := make([]byte, 64<<10)
	for {
		n, err := r.Read(tmp)
		if err != nil {
			return
		}
		buf = append(buf, tmp[:n]...)
		for {
			cmd, used, err := remoting.DecodeFrame(buf, 0)
			if errors.Is(err, remoting.ErrIncomplete) {
				break
			}
			if err != nil {
				return
			}
			buf = buf[used:]
			if cmd.IsResponse() {
				s.mu.Lock()
				s.resps[cmd.Opaque] = cmd
				s.mu.Unlock()
				continue
			}
			s.mu.Lock()
			s.calls[cmd.Code]++
			s.mu.Unlock()
			// Each request on its own goroutine, so a held one does not
			// stop the connection.
			s.wg.Add(1)
			go func(cmd *remoting.Command) {
				defer s.wg.Done()
				resp := s.handle(cmd)
				if resp == nil || cmd.IsOneway() {
					return
				}
				resp.Opaque = cmd.Opaque
				resp.Flag |= remoting.FlagResponse
				resp.Serialize = cmd.Serialize
				if out, err := resp.AppendFrame(nil); err == nil {
					_, _ = c.Write(out)
				}
			}(cmd)
		}
	}
}

// Response returns a client's response to the pushed request with opaque,
// nil until one arrived.
func (s *Server) Response(opaque int32) *remoting.Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resps[opaque]
}

// Push sends req to every connected client.
func (s *Server) Push(req *remoting.Command) error {
	out, err := req.AppendFrame(nil)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if _, err := c.Write(out); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

func (s *Server) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
