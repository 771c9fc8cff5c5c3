package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// fakePeer is a NameServer and broker in one listener, just enough for the
// official producer: routes, heartbeats and sends. It decodes with our
// codec, so it also checks that the official client's frames and batch
// bodies decode. It stands in until the in-repo broker exists.
type fakePeer struct {
	t      *testing.T
	ln     net.Listener
	topic  string
	runID  string
	stored atomic.Int64 // messages accepted, with runProperty checked
	bad    atomic.Int64 // messages without this run's property

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
	errs  chan error
}

func startFakePeer(t *testing.T) *fakePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{t: t, ln: ln, conns: map[net.Conn]struct{}{}, errs: make(chan error, 16)}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *fakePeer) addr() string { return p.ln.Addr().String() }

func (p *fakePeer) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	close(p.errs)
	for err := range p.errs {
		p.t.Error("fake peer:", err)
	}
}

func (p *fakePeer) report(err error) {
	select {
	case p.errs <- err:
	default:
	}
}

func (p *fakePeer) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *fakePeer) serve(c net.Conn) {
	defer p.wg.Done()
	defer c.Close()
	r := bufio.NewReader(c)
	var out []byte
	writeFailed := false
	for {
		var prefix [4]byte
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			return
		}
		frame := make([]byte, 4+binary.BigEndian.Uint32(prefix[:]))
		copy(frame, prefix[:])
		if _, err := io.ReadFull(r, frame[4:]); err != nil {
			return
		}
		req, _, err := remoting.DecodeFrame(frame, remoting.DefaultMaxFrameSize)
		if err != nil {
			p.report(fmt.Errorf("decode: %w", err))
			return
		}
		resp := p.handle(req)
		if req.IsOneway() || resp == nil || writeFailed {
			continue
		}
		resp.Opaque, resp.Serialize = req.Opaque, req.Serialize
		if out, err = resp.AppendFrame(out[:0]); err != nil {
			p.report(err)
			return
		}
		if _, err := c.Write(out); err != nil {
			// The client closed while replies were in flight (the official
			// client never sets the oneway flag, so even its oneway sends
			// get replies); keep reading what it sent before closing.
			writeFailed = true
		}
	}
}

func (p *fakePeer) handle(req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(remoting.Success, "")
	switch req.Code {
	case remoting.GetRouteInfoByTopic:
		// Java's route JSON, integer broker-id keys unquoted.
		resp.Body = []byte(`{"queueDatas":[{"brokerName":"fake","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0}],` +
			`"brokerDatas":[{"cluster":"c","brokerName":"fake","brokerAddrs":{0:"` + p.addr() + `"}}]}`)
	case remoting.SendMessage, remoting.SendMessageV2, remoting.SendBatchMessage:
		// The official client sends single messages as SEND_MESSAGE with
		// the long-key header and batches as SEND_BATCH_MESSAGE with V2.
		var h remoting.SendMessageRequestHeader
		var err error
		if req.Code == remoting.SendMessage {
			err = h.FromExt(req.Ext)
		} else {
			err = (*remoting.SendMessageRequestHeaderV2)(&h).FromExt(req.Ext)
		}
		if err != nil {
			p.report(err)
			return remoting.NewResponse(remoting.SystemError, err.Error())
		}
		var props []map[string]string
		if h.Batch || req.Code == remoting.SendBatchMessage {
			msgs, err := message.DecodeBatch(req.Body)
			if err != nil {
				p.report(err)
				return remoting.NewResponse(remoting.SystemError, err.Error())
			}
			for _, m := range msgs {
				props = append(props, m.Properties)
			}
		} else if h.Properties != nil {
			props = append(props, message.DecodeProperties(*h.Properties))
		}
		for _, m := range props {
			if m[runProperty] == "" {
				p.bad.Add(1)
			}
		}
		off := p.stored.Add(int64(len(props)))
		resp.Ext.Set("msgId", "7F00000100002A9F00000000"+strconv.FormatInt(off, 16))
		resp.Ext.Set("queueId", strconv.Itoa(int(h.QueueID)))
		resp.Ext.Set("queueOffset", strconv.FormatInt(off, 10))
	}
	return resp
}

var errNotStored = errors.New("messages missing at the fake peer")
