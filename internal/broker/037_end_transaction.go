package broker

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// END_TRANSACTION (37): a producer commits or rolls back a half message,
// after its local transaction or in answer to CHECK_TRANSACTION_STATE (Java
// EndTransactionProcessor, docs/PROTOCOL.md §9.7). Any connection may send
// it: the producer that answers a check need not be the one that sent the
// half message. Clients send it oneway (the official Go client without the
// oneway bit, so it gets and ignores an answer).

// endTransactionInline serves END_TRANSACTION on the event loop: it waits
// for nothing (the puts do not wait for a flush), and most are oneway, so
// a worker would only add a hand-off.
func (b *Broker) endTransactionInline(ctx context.Context, c *server.Conn, req *remoting.Command) (*remoting.Command, bool) {
	return b.handleEndTransaction(ctx, c, req), true
}

// Remarks of a 4.9.8 broker's END_TRANSACTION answers.
const (
	remarkTxNotFound     = "Find prepared transaction message failed"
	remarkTxGroupWrong   = "The producer group wrong"
	remarkTxQueueOffset  = "The transaction state table offset wrong"
	remarkTxCommitOffset = "The commit log offset wrong"
)

// handleEndTransaction serves END_TRANSACTION.
func (b *Broker) handleEndTransaction(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.EndTransactionRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return adminHeaderError(err)
	}
	if b.cfg.BrokerID != 0 {
		return remoting.NewResponse(remoting.SlaveNotAvailable, "")
	}
	var commit bool
	switch h.CommitOrRollback {
	case remoting.TransactionCommit:
		commit = true
	case remoting.TransactionRollback:
	default:
		// Unknown (0) or not a state at all: Java logs and answers nothing.
		b.log.Debug("end transaction without a decision", "remote", c.String(), "group", h.ProducerGroup,
			"state", h.CommitOrRollback, "fromCheck", h.FromTransactionCheck, "remark", req.Remark)
		return nil
	}
	buf := b.tx.recs.Get().(*[]byte)
	defer b.tx.recs.Put(buf)
	half, resp := b.preparedMessage(&h, buf)
	if resp != nil {
		return resp
	}
	err := b.tx.decide(ctx, &half, commit)
	switch {
	case err == nil:
	case errors.Is(err, errTxDecided):
		// A second decision (a late END_TRANSACTION after a check answer,
		// or the other way round) changes nothing; Java would store the
		// commit again. Logged with the offsets, so that a decision that
		// should have applied (a transaction discarded after its checks)
		// can be traced.
		b.log.Info("end transaction ignored: transaction decided or unknown", "remote", c.String(), "group", h.ProducerGroup,
			"msgId", h.MsgID, "commitLogOffset", h.CommitLogOffset, "queueOffset", h.TranStateTableOffset,
			"commit", commit, "fromCheck", h.FromTransactionCheck)
	case errors.Is(err, errTxNoRealTopic):
		return remoting.NewResponse(remoting.SystemError, err.Error())
	default:
		return b.finalPutErrorResponse(err)
	}
	return remoting.NewResponse(remoting.Success, "")
}

// preparedMessage loads the half message END_TRANSACTION names and checks
// it as Java's checkPrepareMessage does. Beyond Java, the record must be a
// half message: an offset of any other record is "not found". The record
// is read into buf (see recordInto).
func (b *Broker) preparedMessage(h *remoting.EndTransactionRequestHeader, buf *[]byte) (halfRecord, *remoting.Command) {
	half, err := b.tx.recordInto(buf, h.CommitLogOffset)
	if err != nil || string(half.v.Topic) != rocketmq.TopicTransHalf {
		return half, remoting.NewResponse(remoting.SystemError, remarkTxNotFound)
	}
	switch {
	case half.group != h.ProducerGroup:
		return half, remoting.NewResponse(remoting.SystemError, remarkTxGroupWrong)
	case half.v.QueueOffset != h.TranStateTableOffset:
		return half, remoting.NewResponse(remoting.SystemError, remarkTxQueueOffset)
	case half.v.PhysicalOffset != h.CommitLogOffset:
		return half, remoting.NewResponse(remoting.SystemError, remarkTxCommitOffset)
	}
	return half, nil
}

// finalPutErrorResponse is Java's sendFinalMessage answer to a failed put
// of the committed message.
func (b *Broker) finalPutErrorResponse(err error) *remoting.Command {
	switch {
	case errors.Is(err, store.ErrMessageTooLarge), errors.Is(err, store.ErrInvalidMessage):
		return remoting.NewResponse(remoting.MessageIllegal, "The message is illegal, maybe msg body or properties length not matched. msg body length limit "+
			strconv.Itoa(b.cfg.MaxMessageSize)+"B, msg properties length limit 32KB.")
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotWritable):
		return remoting.NewResponse(remoting.ServiceNotAvailable, "Service not available now.")
	case errors.Is(err, store.ErrIO):
		b.log.Error("store committed transaction message", "err", err)
		return remoting.NewResponse(remoting.SystemError, "Create mapped file failed.")
	}
	b.log.Error("store committed transaction message", "err", err)
	return remoting.NewResponse(remoting.SystemError, "UNKNOWN_ERROR")
}
