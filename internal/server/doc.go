// Package server is the RocketMQ remoting server shared by the in-repo
// NameServer and Broker. It is the only package that imports gnet.
//
// A Server maps request codes to Handlers. gnet's event loop only frames
// and decodes: OnTraffic peeks the 4-byte length, bounds it by
// Config.MaxFrameSize, peeks the whole frame, decodes it into an owned
// remoting.Command and discards it, at most a fixed number of frames per
// event (then it wakes itself for the rest). While part of a frame is
// buffered, SO_RCVLOWAT (Linux) keeps the kernel from waking the loop
// before the rest has arrived. A bad or oversized frame closes only the
// connection that sent it.
//
// Requests run on worker goroutines that are reused from one request to
// the next (an idle one leaves after a while), at most Config.MaxHandlers
// at once; beyond that the server answers SYSTEM_BUSY at once rather than block the
// loop. Unknown codes get REQUEST_CODE_NOT_SUPPORTED with Java's remark.
// A handler's non-nil result is the response (opaque, response flag and
// the request's serialize type are filled in); nil means "later", and the
// handler, or whoever holds the request (a parked long-poll pull), calls
// Conn.Reply. Oneway requests are never answered.
//
// Responses are encoded into a per-connection buffer. The goroutine that
// finds no write under way writes the buffer to the socket itself and keeps
// writing what queued up meanwhile, so concurrent replies on one connection
// coalesce into few writes without waking the event loop. What the socket
// does not take goes to gnet on the event loop, and later replies follow it
// there until gnet's buffer has drained.
//
// Conn.Invoke and Conn.InvokeOneway send server→client requests
// (GET_CONSUMER_RUNNING_INFO, NOTIFY_CONSUMER_IDS_CHANGED,
// CHECK_TRANSACTION_STATE); responses from the client are matched by
// opaque, and waiting calls fail as soon as the connection closes.
//
// Close cancels handler contexts and, while its ctx allows, waits for
// running handlers (their responses still go out); then it stops gnet,
// which closes every connection and runs the OnConnClose callbacks. It
// returns only once every handler and worker goroutine has ended, so a
// handler that ignores its context holds Close up.
//
// gnet keeps its logger in a process-wide variable and each gnet.Run sets
// it, so with several servers in one process a few of gnet's own lines
// (start-up, listener close) may go to another server's logger.
package server
