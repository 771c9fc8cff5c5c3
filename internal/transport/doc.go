// Package transport is the client side of the RocketMQ remoting protocol:
// connections to NameServers and brokers, request/response matching by
// opaque, and handlers for requests the servers send to the client
// (docs/PROTOCOL.md §1.2, §1.8, §8.1).
//
// A Client keeps one connection per address, dialed on first use. Callers
// of one address share its dial; a dial that hangs blocks only callers of
// that address. A failed dial is reported to everyone waiting for it and
// the next call dials again; a broken connection fails its pending calls
// at once with ErrConnClosed and is re-dialed on the next call.
//
// Each connection has one reader and one writer goroutine. Callers encode
// their frame into a shared write buffer; the writer sends everything
// queued with one write, so concurrent calls share syscalls. A call alone
// on a plain TCP connection writes its frame itself (one non-blocking
// write) and, when nobody else reads the connection, reads its response
// itself too: a lone sync caller then costs no goroutine handoff (conn.go,
// read.go); such a caller notices a cancelled ctx within 10 ms. Whoever reads decodes each frame by its own header encoding
// and hands responses to their waiting call; requests go to the
// registered Handler on a goroutine of their own (bounded, see
// WithMaxHandlers), or are answered REQUEST_CODE_NOT_SUPPORTED.
//
// Calls come in three forms: Invoke (sync), InvokeAsync (callback on a
// client goroutine; no goroutine or timer per call, see async.go) and
// InvokeOneway. The deadline of a call is the earlier
// of its ctx's and the client's timeout; giving up removes the pending
// entry. A timeout on a connection that received nothing since the
// request was written closes it, for the peer is taken for dead; the next
// call dials again (WithTimeoutClose). Errors are *Error values matchable with errors.Is against ErrClosed,
// ErrTimeout, ErrConnClosed, ErrDial, ErrTooManyInflight or the ctx error;
// remoting.IsRetriable treats dial failures, lost connections and the
// client's own timeout as retriable.
//
// Locks: no two locks of this package nest (Client.mu, Client.lifeMu,
// Client.hmu, conn.pmu, conn.wmu are each released before another is
// taken), except that asyncState.mu is held while lifeMu is read-locked to
// start a worker or the sweeper (lifeMu is never held while asyncState.mu
// is taken). Callbacks and handlers never run with a lock held.
// Every goroutine is counted in the Client's Goroutines, and Close waits
// for all of them but its caller's (a callback or handler may Close).
package transport
