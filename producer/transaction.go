package producer

import (
	"context"
	"errors"

	"github.com/go-rocketmq/rocketmq"
)

// LocalState is the outcome of a local transaction (Java
// LocalTransactionState).
//
// The zero value is LocalUnknown: a listener that forgets to decide
// leaves the message invisible and the broker asks again later.
type LocalState int

const (
	// LocalUnknown leaves the half message undecided: the broker asks a
	// member of the producer group again (CheckLocal) after the check
	// interval, up to its maximum checks.
	LocalUnknown LocalState = iota
	// LocalCommit makes the message visible to consumers.
	LocalCommit
	// LocalRollback discards the message.
	LocalRollback
)

func (s LocalState) String() string {
	switch s {
	case LocalCommit:
		return "COMMIT_MESSAGE"
	case LocalRollback:
		return "ROLLBACK_MESSAGE"
	case LocalUnknown:
		return "UNKNOW"
	}
	return "unknown"
}

// TransactionListener runs the local transactions of a transactional
// producer and answers the broker's checks (Java TransactionListener).
type TransactionListener interface {
	// ExecuteLocal runs the local transaction of msg, just stored as a
	// half message, with the arg given to SendInTransaction. A panic
	// counts as LocalUnknown and is logged.
	ExecuteLocal(ctx context.Context, msg *rocketmq.Message, arg any) LocalState
	// CheckLocal tells the broker the state of the local transaction of
	// a half message still undecided after the check immunity time:
	// msg.TransactionID() and msg's properties identify it. It runs on
	// the producer's check goroutines, for any half message of the group,
	// including those sent by another producer instance of the group. A
	// panic counts as LocalUnknown and is logged.
	CheckLocal(ctx context.Context, msg *rocketmq.MessageExt) LocalState
}

// TransactionResult is what SendInTransaction returns: the half message's
// send result and the local transaction's outcome.
type TransactionResult struct {
	*rocketmq.SendResult
	// State is what ExecuteLocal returned (LocalUnknown after a panic).
	State LocalState
	// TransactionID identifies the transaction: the half message's
	// UNIQ_KEY, as Java.
	TransactionID string
}

// TransactionProducer sends messages in transactions (Java
// TransactionMQProducer); it is also a Producer for ordinary sends.
// Create it with NewTransactional, Start it, and Shutdown it when done.
type TransactionProducer struct {
	*Producer
	listener TransactionListener
}

// ErrTransactionUnsupported is returned for a message that cannot be
// sent in a transaction: a batch, or one with a delay, as Java refuses.
var ErrTransactionUnsupported = errors.New("rocketmq: message not allowed in a transaction")

// NewTransactional validates the options and returns a transactional
// producer that is not started. The options are the producer's; the
// group names the producer group the broker asks when it checks a
// transaction.
func NewTransactional(l TransactionListener, opts ...Option) (*TransactionProducer, error) {
	if l == nil {
		return nil, errors.New("rocketmq: transactional producer: nil listener")
	}
	p, err := New(opts...)
	if err != nil {
		return nil, err
	}
	return &TransactionProducer{Producer: p, listener: l}, nil
}

// SendInTransaction sends msg as a half message, runs the listener's
// ExecuteLocal with arg and ends the transaction with its outcome. The
// error is non-nil when the half message was not stored (ExecuteLocal is
// then not called); the END_TRANSACTION request is oneway, as Java's, so
// its loss is repaired by the broker's check.
func (t *TransactionProducer) SendInTransaction(ctx context.Context, msg *rocketmq.Message, arg any) (*TransactionResult, error) {
	return nil, errors.New("rocketmq: transactions: not built yet")
}
