package server

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/remoting"
)

const codeInlineEcho int32 = 1004

// FuzzServerInput writes arbitrary bytes, in chunks of arbitrary size, to
// a live server: whatever arrives, the server answers or closes that
// connection, never panics, and keeps serving another client.
func FuzzServerInput(f *testing.F) {
	frame := func(cmd *remoting.Command) []byte { return rawframe.Frame(f, cmd) }
	valid := frame(req(codeEcho, 1, remoting.SerializeJSON, "body"))
	inline := frame(req(codeInlineEcho, 2, remoting.SerializeRocketMQ, "inline"))
	oneway := req(codeEcho, 3, remoting.SerializeRocketMQ, "")
	oneway.Flag |= remoting.FlagOneway
	resp := remoting.NewResponse(remoting.Success, "r")
	resp.Opaque = 9
	for _, seed := range [][]byte{
		nil,
		valid,
		inline,
		append(append([]byte(nil), valid...), inline...),
		frame(oneway),
		frame(resp),
		frame(req(codeUnknown, 4, remoting.SerializeJSON, "")),
		valid[:len(valid)/2],
		binaryFrameWord(0x7fffffff),
		binaryFrameWord(2),
		jsonFrame(`{"code":"abc","extFields":7}`, nil),
	} {
		f.Add(seed, uint16(0))
		f.Add(seed, uint16(3))
	}

	s := New(Config{MaxFrameSize: 1 << 20})
	s.Handle(codeEcho, echo)
	s.Handle(codeInlineEcho, echo)
	s.HandleInline(codeInlineEcho, func(ctx context.Context, c *Conn, r *remoting.Command) (*remoting.Command, bool) {
		out := echo(ctx, c, r)
		out.Body = append([]byte(nil), r.Body...) // the body is a view
		return out, true
	})
	addr := startServer(f, s)
	good := rawframe.Dial(f, addr)
	var opaque int32

	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		nc, err := net.DialTimeout("tcp", addr, rawframe.Wait)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		step := int(chunk)
		if step == 0 {
			step = len(data)
		}
		for rest := data; len(rest) > 0; {
			n := min(step, len(rest))
			if _, err := nc.Write(rest[:n]); err != nil {
				break // closed by the server: allowed
			}
			rest = rest[n:]
		}
		_ = nc.(*net.TCPConn).CloseWrite()
		buf := make([]byte, 64<<10)
		for {
			if _, err := nc.Read(buf); err != nil {
				if rawframe.IsTimeout(err) {
					t.Fatal("server neither answered nor closed after the input ended")
				}
				break
			}
		}
		good.ReportTo(t)
		opaque++
		if r := good.Call(req(codeEcho, opaque, remoting.SerializeJSON, "ok")); string(r.Body) != "ok" {
			t.Fatalf("other client: body %q", r.Body)
		}
	})
}

// binaryFrameWord is a frame's length word alone.
func binaryFrameWord(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
