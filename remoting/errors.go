package remoting

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
)

// Error is a non-success response from a peer: the response code and its
// remark. Two Errors match under errors.Is when their codes are equal, so
//
//	errors.Is(err, remoting.ErrSystemBusy)
//
// works on any reply whatever its remark.
type Error struct {
	Code   int32
	Remark string
}

// Error reads "rocketmq: CODE_NAME: remark" on one line, without the FAQ
// link Java appends to many remarks (Remark keeps it).
func (e *Error) Error() string {
	s := "rocketmq: " + ResponseCodeName(e.Code)
	if r := TrimRemark(e.Remark); r != "" {
		s += ": " + r
	}
	return s
}

// TrimRemark returns a remark without the "\nSee <url> for further
// details." that Java's FAQUrl.suggestTodo appends, on one line.
func TrimRemark(r string) string {
	if i := strings.Index(r, "\nSee http"); i >= 0 && strings.HasSuffix(r, " for further details.") {
		r = r[:i]
	}
	if strings.ContainsAny(r, "\r\n") {
		r = strings.Join(strings.Fields(r), " ")
	}
	return strings.TrimSpace(r)
}

// Is reports whether target is an *Error with the same code. A broker's
// ACL refusal (SYSTEM_ERROR whose remark is Java's AclException) also
// matches ErrACL.
func (e *Error) Is(target error) bool {
	if target == ErrACL {
		return e.Code == SystemError && strings.HasPrefix(e.Remark, aclExceptionClass)
	}
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for the response codes callers commonly test for. Compare with
// errors.Is; never modify them.
var (
	ErrSystemError               = &Error{Code: SystemError}
	ErrSystemBusy                = &Error{Code: SystemBusy}
	ErrRequestCodeNotSupported   = &Error{Code: RequestCodeNotSupported}
	ErrFlushDiskTimeout          = &Error{Code: FlushDiskTimeout}
	ErrSlaveNotAvailable         = &Error{Code: SlaveNotAvailable}
	ErrFlushSlaveTimeout         = &Error{Code: FlushSlaveTimeout}
	ErrMessageIllegal            = &Error{Code: MessageIllegal}
	ErrServiceNotAvailable       = &Error{Code: ServiceNotAvailable}
	ErrVersionNotSupported       = &Error{Code: VersionNotSupported}
	ErrNoPermission              = &Error{Code: NoPermission}
	ErrTopicNotExist             = &Error{Code: TopicNotExist}
	ErrTopicExistAlready         = &Error{Code: TopicExistAlready}
	ErrPullNotFound              = &Error{Code: PullNotFound}
	ErrPullRetryImmediately      = &Error{Code: PullRetryImmediately}
	ErrPullOffsetMoved           = &Error{Code: PullOffsetMoved}
	ErrQueryNotFound             = &Error{Code: QueryNotFound}
	ErrSubscriptionParseFailed   = &Error{Code: SubscriptionParseFailed}
	ErrSubscriptionNotExist      = &Error{Code: SubscriptionNotExist}
	ErrSubscriptionNotLatest     = &Error{Code: SubscriptionNotLatest}
	ErrSubscriptionGroupNotExist = &Error{Code: SubscriptionGroupNotExist}
	ErrInvalidParameter          = &Error{Code: InvalidParameter}
	ErrNoBuyerID                 = &Error{Code: NoBuyerID}
	ErrNotInCurrentUnit          = &Error{Code: NotInCurrentUnit}
	ErrConsumerNotOnline         = &Error{Code: ConsumerNotOnline}
	ErrConsumeMsgTimeout         = &Error{Code: ConsumeMsgTimeout}
	ErrNoMessage                 = &Error{Code: NoMessage}
	ErrFlowControl               = &Error{Code: FlowControl}
	ErrIllegalOperation          = &Error{Code: IllegalOperation}
	ErrGoAway                    = &Error{Code: GoAway}
)

// ResponseError returns nil for a Success response and an *Error carrying
// the code and remark otherwise. Codes such as PullNotFound or
// FlushDiskTimeout are ordinary outcomes for some requests; callers that
// expect them check the code before calling this.
func ResponseError(resp *Command) error {
	if resp.Code == Success {
		return nil
	}
	return &Error{Code: resp.Code, Remark: resp.Remark}
}

// retriableCode is the Java producer's retry set (docs/PROTOCOL.md §2.2, §8.5).
func retriableCode(code int32) bool {
	switch code {
	case TopicNotExist, ServiceNotAvailable, SystemError, SystemBusy,
		NoPermission, NoBuyerID, NotInCurrentUnit, GoAway:
		return true
	}
	return false
}

// IsRetriable reports whether a failed request may be sent again, to
// another broker if there is one:
//   - an *Error whose code is in the Java producer's retry set
//     (TOPIC_NOT_EXIST, SERVICE_NOT_AVAILABLE, SYSTEM_ERROR, SYSTEM_BUSY,
//     NO_PERMISSION, NO_BUYER_ID, NOT_IN_CURRENT_UNIT, GO_AWAY);
//   - an error with a Retriable() bool method saying so (transport errors);
//   - a timeout (Timeout() bool, e.g. a net.Error), a closed or reset
//     connection, io.EOF / io.ErrUnexpectedEOF.
//
// Cancellation and the caller's own context deadline are not retriable: the
// caller's budget is spent.
func IsRetriable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var re *Error
	if errors.As(err, &re) {
		return retriableCode(re.Code)
	}
	var r interface{ Retriable() bool }
	if errors.As(err, &r) {
		return r.Retriable()
	}
	var t interface{ Timeout() bool }
	if errors.As(err, &t) && t.Timeout() {
		return true
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
