package mqclient

import (
	"context"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Requests brokers send to clients, each handed to the member of the group
// it names (Java ClientRemotingProcessor). Answers for a group this client
// does not serve are Java's.

func (c *Client) registerHandlers() {
	c.tr.RegisterHandler(remoting.PushReplyMessageToClient, c.handleReply)
	// Both only hand their work on; a broker sends them in bursts (a check
	// round, a rebalance of many groups), and they are oneway: refused
	// for want of a handler goroutine they would be lost.
	c.tr.RegisterInlineHandler(remoting.CheckTransactionState, c.handleCheckTransaction)
	c.tr.RegisterInlineHandler(remoting.NotifyConsumerIDsChanged, c.handleIDsChanged)
	c.tr.RegisterHandler(remoting.ResetConsumerClientOffset, c.handleResetOffset)
	c.tr.RegisterHandler(remoting.GetConsumerStatusFromClient, c.handleConsumerStatus)
	c.tr.RegisterHandler(remoting.GetConsumerRunningInfo, c.handleRunningInfo)
	c.tr.RegisterHandler(remoting.ConsumeMessageDirectly, c.handleConsumeDirectly)
}

func badRequest(err error) *remoting.Command {
	return remoting.NewResponse(remoting.SystemError, err.Error())
}

// noGroup is Java's remark for a consumer group this client does not serve.
func noGroup(group string) *remoting.Command {
	return remoting.NewResponse(remoting.SystemError, "The Consumer Group <"+group+"> not exist in this consumer")
}

// handleCheckTransaction: CHECK_TRANSACTION_STATE (39, oneway, §3.10). The
// group comes from the message's PGROUP property; nothing is answered.
func (c *Client) handleCheckTransaction(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h remoting.CheckTransactionStateRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		c.log.Warn("rocketmq: bad transaction check", "addr", addr, "err", err)
		return nil
	}
	msg, _, err := message.DecodeRecord(req.Body)
	if err != nil {
		c.log.Warn("rocketmq: bad transaction check", "addr", addr, "err", err)
		return nil
	}
	msg.Topic = UnwrapNamespace(c.cfg.Namespace, msg.Topic)
	group := msg.Property(rocketmq.PropertyProducerGroup)
	p, ok := c.producer(group)
	if !ok {
		c.log.Debug("rocketmq: transaction check for a group this client does not serve", "addr", addr, "group", group)
		return nil
	}
	if p != nil {
		p.CheckTransactionState(ctx, addr, msg, &h)
	}
	return nil
}

// handleIDsChanged: NOTIFY_CONSUMER_IDS_CHANGED (40, oneway, §3.13). Java
// rebalances every consumer of the instance; the named group first.
func (c *Client) handleIDsChanged(_ context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h remoting.NotifyConsumerIdsChangedRequestHeader
	_ = h.FromExt(req.Ext)
	c.log.Debug("rocketmq: consumer ids changed", "addr", addr, "group", h.ConsumerGroup)
	if cons := c.consumer(h.ConsumerGroup); cons != nil {
		cons.RebalanceSoon()
	}
	for _, nc := range c.snapshot().consumers {
		if nc.group != h.ConsumerGroup {
			nc.c.RebalanceSoon()
		}
	}
	return nil
}

// handleResetOffset: RESET_CONSUMER_CLIENT_OFFSET (220); Java answers
// nothing, and ignores groups it does not serve.
func (c *Client) handleResetOffset(_ context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h remoting.ResetOffsetRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	var body remoting.ResetOffsetBody
	if len(req.Body) > 0 {
		if err := body.DecodeJSON(req.Body); err != nil {
			return badRequest(err)
		}
	}
	cons := c.consumer(h.Group)
	if cons == nil {
		c.log.Info("rocketmq: offset reset for a group this client does not serve", "addr", addr, "group", h.Group)
		return nil
	}
	cons.ResetOffset(h.Topic, body.OffsetTable)
	return nil
}

// handleConsumerStatus: GET_CONSUMER_STATUS_FROM_CLIENT (221): the group's
// offsets of topic, an empty table for a group this client does not serve.
func (c *Client) handleConsumerStatus(_ context.Context, _ string, req *remoting.Command) *remoting.Command {
	var h remoting.GetConsumerStatusRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	body := remoting.GetConsumerStatusBody{MessageQueueTable: map[rocketmq.MessageQueue]int64{}}
	if cons := c.consumer(h.Group); cons != nil {
		if t := cons.Offsets(h.Topic); t != nil {
			body.MessageQueueTable = t
		}
	}
	return jsonResponse(&body)
}

// handleRunningInfo: GET_CONSUMER_RUNNING_INFO (307).
func (c *Client) handleRunningInfo(_ context.Context, _ string, req *remoting.Command) *remoting.Command {
	var h remoting.GetConsumerRunningInfoRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	cons := c.consumer(h.ConsumerGroup)
	if cons == nil {
		return noGroup(h.ConsumerGroup)
	}
	info := cons.RunningInfo()
	if info == nil {
		return noGroup(h.ConsumerGroup)
	}
	return jsonResponse(info)
}

// handleConsumeDirectly: CONSUME_MESSAGE_DIRECTLY (309); the body is one
// stored message.
func (c *Client) handleConsumeDirectly(ctx context.Context, _ string, req *remoting.Command) *remoting.Command {
	var h remoting.ConsumeMessageDirectlyResultRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	msg, _, err := message.DecodeRecord(req.Body)
	if err != nil {
		return badRequest(err)
	}
	cons := c.consumer(h.ConsumerGroup)
	if cons == nil {
		return noGroup(h.ConsumerGroup)
	}
	var broker string
	if h.BrokerName != nil {
		broker = *h.BrokerName
	}
	res := cons.ConsumeDirectly(ctx, msg, broker)
	if res == nil {
		return noGroup(h.ConsumerGroup)
	}
	return jsonResponse(res)
}

// jsonResponse answers SUCCESS with body in fastjson's syntax, as Java's
// RemotingSerializable.encode writes it.
func jsonResponse(body interface {
	AppendJSON([]byte, remoting.JSONStyle) []byte
}) *remoting.Command {
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Body = body.AppendJSON(nil, remoting.JSONFastjson)
	return resp
}
