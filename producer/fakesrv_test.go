package producer

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// fakeServer is a minimal remoting peer on 127.0.0.1:0: it answers each
// request with handle's reply (nil: none) and can push requests to the
// last connected client.
type fakeServer struct {
	ln     net.Listener
	handle func(req *remoting.Command) *remoting.Command

	mu    sync.Mutex
	conns []net.Conn
	calls map[int32]int
	wg    sync.WaitGroup
}

func newFakeServer(t *testing.T, handle func(req *remoting.Command) *remoting.Command) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, handle: handle, calls: map[int32]int{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) count(code int32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[code]
}

func (s *fakeServer) accept() {
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

func (s *fakeServer) serve(c net.Conn) {
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

// push sends a oneway-less request to every connected client.
func (s *fakeServer) push(req *remoting.Command) error {
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

func (s *fakeServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
