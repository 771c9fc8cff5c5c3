package broker

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Request-reply (Java ReplyMessageProcessor): a replier sends the reply with
// SEND_REPLY_MESSAGE (324) or SEND_REPLY_MESSAGE_V2 (325); the broker pushes
// it at once to the requesting client named by REPLY_TO_CLIENT with
// PUSH_REPLY_MESSAGE_TO_CLIENT (326) over that client's producer
// connection, then stores it in its topic (normally <cluster>_REPLY_TOPIC;
// 4.9.8's storeReplyMessageEnable defaults to true). The replier learns
// whether the push worked: SUCCESS, or SYSTEM_ERROR with Java's remark.

// replyPushTimeout is Broker2Client.callClient's timeout.
const replyPushTimeout = 10 * time.Second

// sendReply pushes and stores one reply message.
func (b *Broker) sendReply(ctx context.Context, c *server.Conn, req *remoting.Command, h *remoting.SendMessageRequestHeader) *remoting.Command {
	_, queueID, resp := b.sendCheck(c, h)
	if resp != nil {
		return resp
	}
	raw := orZero(h.Properties)
	if len(raw) > message.MaxPropertiesLength || len(req.Body) > b.cfg.MaxMessageSize {
		return b.sendResponse(remoting.MessageIllegal, msgIllegalRemark(b.cfg.MaxMessageSize))
	}

	pushErr := b.pushReply(ctx, c, h, raw, req.Body)

	// Stored as sent, like Java: no UNIQ_KEY or CLUSTER is added.
	p := scanSendProps(raw)
	reconsume := orZero(h.ReconsumeTimes)
	put := store.PutRequest{
		RecordFields: message.RecordFields{
			QueueID:        queueID,
			Flag:           h.Flag,
			SysFlag:        h.SysFlag,
			BornTimestamp:  h.BornTimestamp,
			BornHost:       bornHost(c),
			StoreHost:      b.storeHost,
			ReconsumeTimes: reconsume,
			Body:           req.Body,
			Topic:          h.Topic,
			Properties:     raw,
		},
		TagsCode:  message.TagHash(p.tags),
		UniqKey:   p.uniq,
		Keys:      p.keys,
		WaitFlush: p.waitStoreMsgOK(),
	}
	res, err := b.store.PutMessage(ctx, &put)
	stored := err == nil
	if stored {
		b.stats.addPut(res.MsgCount, res.WroteBytes)
	} else {
		b.log.Warn("store reply message", "topic", h.Topic, "err", err)
	}

	switch {
	case pushErr != "":
		resp = b.sendResponse(remoting.SystemError, pushErr)
		if stored {
			resp.Ext = appendReplyHeader(resp.Ext, rocketmq.EncodeOffsetMsgID(b.storeHost, res.PhysicalOffset), queueID, res.QueueOffset)
		}
		return resp
	case stored:
		return b.sendOKResponse(&res, queueID, nil)
	default:
		// Pushed but not stored: Java answers SUCCESS with placeholder ids.
		resp = b.sendResponse(remoting.Success, "")
		resp.Ext = appendReplyHeader(resp.Ext, "0", queueID, 0)
		return resp
	}
}

func appendReplyHeader(ext remoting.ExtFields, msgID string, queueID int32, queueOffset int64) remoting.ExtFields {
	return append(ext,
		remoting.Field{Key: "msgId", Value: msgID},
		remoting.Field{Key: "queueId", Value: strconv.Itoa(int(queueID))},
		remoting.Field{Key: "queueOffset", Value: strconv.FormatInt(queueOffset, 10)})
}

// pushReply sends PUSH_REPLY_MESSAGE_TO_CLIENT to the client named by
// REPLY_TO_CLIENT and returns "" or the remark of the failure.
func (b *Broker) pushReply(ctx context.Context, c *server.Conn, h *remoting.SendMessageRequestHeader, raw string, body []byte) string {
	client := propValue(raw, rocketmq.PropertyReplyToClient)
	if client == "" {
		b.log.Warn("reply message without " + rocketmq.PropertyReplyToClient)
		return "reply message properties[" + rocketmq.PropertyReplyToClient + "] is null"
	}
	to := b.clients.connByClientID(client)
	if to == nil {
		remark := "push reply message fail, channel of <" + client + "> not found."
		b.log.Warn(remark)
		return remark
	}
	// The pushed properties gain PUSH_REPLY_TIME.
	props := make([]byte, 0, len(raw)+40)
	for it := message.Properties(raw); it.Next(); {
		if it.Key() != rocketmq.PropertyPushReplyTime {
			props = message.AppendProperty(props, 0, it.Key(), it.Value())
		}
	}
	now := b.now()
	props = message.AppendProperty(props, 0, rocketmq.PropertyPushReplyTime, strconv.FormatInt(now, 10))
	ps := string(props)
	rh := remoting.ReplyMessageRequestHeader{
		ProducerGroup:         h.ProducerGroup,
		Topic:                 h.Topic,
		DefaultTopic:          h.DefaultTopic,
		DefaultTopicQueueNums: h.DefaultTopicQueueNums,
		QueueID:               h.QueueID,
		SysFlag:               h.SysFlag,
		BornTimestamp:         h.BornTimestamp,
		Flag:                  h.Flag,
		Properties:            &ps,
		ReconsumeTimes:        h.ReconsumeTimes,
		UnitMode:              h.UnitMode,
		BornHost:              javaSocketString(c.RemoteAddrPort()),
		StoreHost:             javaSocketString(b.storeHost),
		StoreTimestamp:        now,
	}
	push := remoting.NewRequest(remoting.PushReplyMessageToClient, rh.AppendExt(nil), body)
	ctx, cancel := context.WithTimeout(ctx, replyPushTimeout)
	defer cancel()
	resp, err := to.Invoke(ctx, push)
	if err != nil || resp.Code != remoting.Success {
		if err != nil {
			b.log.Warn("push reply message failed", "client", client, "err", err)
		} else {
			b.log.Warn("push reply message refused", "client", client, "code", resp.Code, "remark", resp.Remark)
		}
		return "push reply message to " + client + "fail." // sic
	}
	return ""
}

// javaSocketString is InetSocketAddress.toString() of a resolved address:
// "/ip:port".
func javaSocketString(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return "/0.0.0.0:0"
	}
	return "/" + netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
}
