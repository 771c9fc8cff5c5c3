package broker

import (
	"bytes"
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// replyRequester is a client that registered as a producer with a client
// id and records the PUSH_REPLY_MESSAGE_TO_CLIENT requests it gets.
type replyRequester struct {
	cli    *transport.Client
	pushes chan *remoting.Command
}

func newReplyRequester(t *testing.T, e *delayEnv, clientID string, answer int32) *replyRequester {
	t.Helper()
	cli := newTestClient(t)
	r := &replyRequester{cli: cli, pushes: make(chan *remoting.Command, 8)}
	cli.RegisterHandler(remoting.PushReplyMessageToClient, func(_ context.Context, _ string, req *remoting.Command) *remoting.Command {
		r.pushes <- req
		return remoting.NewResponse(answer, "")
	})
	hb := remoting.HeartbeatData{ClientID: clientID, ProducerDataSet: []remoting.ProducerData{{GroupName: "RequesterPG"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, e.b.Addr(), remoting.NewRequest(remoting.HeartBeat, nil, remoting.EncodeJSON(&hb, remoting.JSONFastjson)))
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("heartbeat: %v %+v", err, resp)
	}
	return r
}

// sendReply sends a reply message with code 324 or 325.
func (e *delayEnv) sendReply(code int32, topic, props string, body []byte) *remoting.Command {
	e.t.Helper()
	h := remoting.SendMessageRequestHeader{
		ProducerGroup:         "ReplierPG",
		Topic:                 topic,
		DefaultTopic:          rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4,
		QueueID:               0,
		SysFlag:               0,
		BornTimestamp:         time.Now().UnixMilli(),
		Flag:                  3,
		Properties:            &props,
		ReconsumeTimes:        remoting.Ptr(int32(0)),
	}
	ext := h.AppendExt(nil)
	if code == remoting.SendReplyMessageV2 {
		ext = h.V2().AppendExt(nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := e.cli.Invoke(ctx, e.b.Addr(), remoting.NewRequest(code, ext, body))
	if err != nil {
		e.t.Fatalf("send reply: %v", err)
	}
	return resp
}

func TestReplyPushedToRequester(t *testing.T) {
	e := delayTestBroker(t, nil)
	req := newReplyRequester(t, e, "10.0.0.9@4242", remoting.Success)
	replyTopic := rocketmq.ReplyTopic("DefaultCluster")
	body := make([]byte, 300)
	for i := range body {
		body[i] = byte(i)
	}
	for _, code := range []int32{remoting.SendReplyMessage, remoting.SendReplyMessageV2} {
		t.Run(remoting.RequestCodeName(code), func(t *testing.T) {
			corr := "corr-" + remoting.RequestCodeName(code)
			props := delayProps("REPLY_TO_CLIENT", "10.0.0.9@4242", "CORRELATION_ID", corr, "MSG_TYPE", "reply",
				"TTL", "3000", "UNIQ_KEY", "AC1100010000"+corr, "PUSH_REPLY_TIME", "1")
			before := time.Now().UnixMilli()
			resp := e.sendReply(code, replyTopic, props, body)
			if resp.Code != remoting.Success {
				t.Fatalf("reply: code %d %q", resp.Code, resp.Remark)
			}
			var push *remoting.Command
			select {
			case push = <-req.pushes:
			case <-time.After(5 * time.Second):
				t.Fatal("no PUSH_REPLY_MESSAGE_TO_CLIENT")
			}
			if !bytes.Equal(push.Body, body) {
				t.Errorf("pushed body differs:\n%s", hex.Dump(push.Body))
			}
			var h remoting.ReplyMessageRequestHeader
			if err := h.FromExt(push.Ext); err != nil {
				t.Fatal(err)
			}
			p := message.DecodeProperties(*h.Properties)
			if p["CORRELATION_ID"] != corr || p["REPLY_TO_CLIENT"] != "10.0.0.9@4242" || p["MSG_TYPE"] != "reply" {
				t.Errorf("pushed properties %v", p)
			}
			if pt := p["PUSH_REPLY_TIME"]; pt < "1" || len(pt) != len("1700000000000") || strings.Count(*h.Properties, "PUSH_REPLY_TIME") != 1 {
				t.Errorf("PUSH_REPLY_TIME %q in %q", pt, *h.Properties)
			}
			if h.Topic != replyTopic || h.ProducerGroup != "ReplierPG" || h.Flag != 3 || h.QueueID != 0 ||
				h.DefaultTopic != "TBW102" || h.DefaultTopicQueueNums != 4 || h.StoreTimestamp < before ||
				!strings.HasPrefix(h.BornHost, "/127.0.0.1:") || h.StoreHost != "/"+e.b.Addr() {
				t.Errorf("pushed header %+v", h)
			}
			// Stored in the reply topic as sent.
			msgs := e.read(replyTopic, 0)
			m := msgs[len(msgs)-1]
			if m.Properties["CORRELATION_ID"] != corr || m.Properties["PUSH_REPLY_TIME"] != "1" || !bytes.Equal(m.Body, body) {
				t.Errorf("stored reply %v", m.Properties)
			}
			if id, _ := resp.Ext.Get("msgId"); id != m.OffsetMsgID {
				t.Errorf("response msgId %q, stored %s", id, m.OffsetMsgID)
			}
		})
	}
}

func TestReplyFailures(t *testing.T) {
	e := delayTestBroker(t, nil)
	newReplyRequester(t, e, "refuses", remoting.SystemError)
	gone := newReplyRequester(t, e, "gone", remoting.Success)
	gone.cli.Close()
	topic := rocketmq.ReplyTopic("DefaultCluster")
	tests := []struct {
		name   string
		props  string
		remark string
	}{
		{"no REPLY_TO_CLIENT", delayProps("CORRELATION_ID", "c"), "reply message properties[REPLY_TO_CLIENT] is null"},
		{"unknown client", delayProps("REPLY_TO_CLIENT", "nobody", "CORRELATION_ID", "c"),
			"push reply message fail, channel of <nobody> not found."},
		{"client refuses", delayProps("REPLY_TO_CLIENT", "refuses", "CORRELATION_ID", "c"), "push reply message to refusesfail."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.sendReply(remoting.SendReplyMessageV2, topic, tt.props, []byte("r"))
			if resp.Code != remoting.SystemError || resp.Remark != tt.remark {
				t.Errorf("code %d remark %q, want SYSTEM_ERROR %q", resp.Code, resp.Remark, tt.remark)
			}
			// Java stores the reply anyway.
			if id, _ := resp.Ext.Get("msgId"); len(id) != 32 {
				t.Errorf("msgId %q", id)
			}
		})
	}
	// A closed requester is dropped from the registry.
	var resp *remoting.Command
	if !testutil.Poll(0, func() bool {
		resp = e.sendReply(remoting.SendReplyMessageV2, topic, delayProps("REPLY_TO_CLIENT", "gone"), nil)
		return resp.Remark == "push reply message fail, channel of <gone> not found."
	}) {
		t.Fatalf("reply to a closed requester: code %d %q", resp.Code, resp.Remark)
	}
	// The usual send checks apply.
	resp = e.sendReply(remoting.SendReplyMessage, "SCHEDULE_TOPIC_XXXX", delayProps("REPLY_TO_CLIENT", "refuses"), nil)
	if resp.Code != remoting.NoPermission {
		t.Errorf("reply to a forbidden topic: code %d %q", resp.Code, resp.Remark)
	}
}
