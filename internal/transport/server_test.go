package transport

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// fakeServer is a scripted peer: every frame it reads is passed to handle
// on the connection's reader goroutine, in order.
type fakeServer struct {
	ln       net.Listener
	addr     string
	handle   func(sc *srvConn, cmd *remoting.Command)
	accepted atomic.Int32
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns []*srvConn
}

type srvConn struct {
	nc  net.Conn
	wmu sync.Mutex

	mu     sync.Mutex
	frames []*remoting.Command // everything read, in order
}

// startServer listens on a random loopback port (TLS when cfg != nil).
func startServer(t *testing.T, cfg *tls.Config, handle func(sc *srvConn, cmd *remoting.Command)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	s := &fakeServer{ln: ln, addr: ln.Addr().String(), handle: handle}
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		sc := &srvConn{nc: nc}
		s.mu.Lock()
		s.conns = append(s.conns, sc)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(sc)
		}()
	}
}

// serve reads frames from sc until EOF.
func (s *fakeServer) serve(sc *srvConn) {
	defer sc.nc.Close()
	serveFrames(sc, s.handle)
}

func serveFrames(sc *srvConn, handle func(*srvConn, *remoting.Command)) {
	br := bufio.NewReaderSize(sc.nc, 64<<10)
	for {
		hdr, err := br.Peek(4)
		if err != nil {
			return
		}
		size := 4 + int(binary.BigEndian.Uint32(hdr))
		frame := make([]byte, size)
		if _, err := io.ReadFull(br, frame); err != nil {
			return
		}
		cmd, _, err := remoting.DecodeFrame(frame, 0)
		if err != nil {
			return
		}
		sc.mu.Lock()
		sc.frames = append(sc.frames, cmd)
		sc.mu.Unlock()
		if handle != nil {
			handle(sc, cmd)
		}
	}
}

// send encodes and writes one command (safe from any goroutine).
func (sc *srvConn) send(cmd *remoting.Command) error {
	b, err := cmd.AppendFrame(nil)
	if err != nil {
		return err
	}
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	_, err = sc.nc.Write(b)
	return err
}

func (sc *srvConn) received() []*remoting.Command {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return append([]*remoting.Command(nil), sc.frames...)
}

// conn returns the i-th accepted connection, or nil.
func (s *fakeServer) conn(i int) *srvConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < len(s.conns) {
		return s.conns[i]
	}
	return nil
}

// dropAll closes every accepted connection.
func (s *fakeServer) dropAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.conns {
		sc.nc.Close()
	}
}

func (s *fakeServer) close() {
	s.ln.Close()
	s.dropAll()
	s.wg.Wait()
}

// echo answers every non-oneway request with SUCCESS, echoing the body and
// extFields in the request's encoding.
func echo(sc *srvConn, req *remoting.Command) {
	if req.IsResponse() || req.IsOneway() {
		return
	}
	sc.send(echoResponse(req))
}

func echoResponse(req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Opaque = req.Opaque
	resp.Serialize = req.Serialize
	resp.Ext = req.Ext
	resp.Body = req.Body
	return resp
}

// rawEcho is the benchmark peer: per read it answers every complete frame
// and writes all answers at once. ROCKETMQ frames are answered by setting
// the response bit in place; JSON ones are decoded and re-encoded.
func rawEcho(nc net.Conn) error {
	defer nc.Close()
	in := make([]byte, 256<<10)
	var out []byte
	r, w := 0, 0
	for {
		n, err := nc.Read(in[w:])
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		w += n
		out = out[:0]
		for w-r >= 4 {
			size := 4 + int(binary.BigEndian.Uint32(in[r:]))
			if size > len(in) {
				return errors.New("frame larger than the echo buffer")
			}
			if w-r < size {
				break
			}
			f := in[r : r+size]
			if f[4] == byte(remoting.SerializeRocketMQ) {
				out = append(out, f...)
				out[len(out)-size+20] |= byte(remoting.FlagResponse) // low byte of flag
			} else {
				cmd, _, err := remoting.DecodeFrame(f, 0)
				if err != nil {
					return err
				}
				if out, err = echoResponse(cmd).AppendFrame(out); err != nil {
					return err
				}
			}
			r += size
		}
		copy(in, in[r:w])
		w -= r
		r = 0
		if len(out) > 0 {
			if _, err := nc.Write(out); err != nil {
				return err
			}
		}
	}
}
