package store

import "errors"

// Errors returned by the store. Match them with errors.Is.
var (
	// ErrClosed: the store was closed (or crashed) and serves no more calls.
	ErrClosed = errors.New("rocketmq: store is closed")
	// ErrLocked: another Store (in this or another process) holds the directory.
	ErrLocked = errors.New("rocketmq: store directory is locked by another store")
	// ErrCorrupt: the files on disk cannot be used and the store refused to
	// guess; the message names the file.
	ErrCorrupt = errors.New("rocketmq: store files are corrupt")
	// ErrIO: a read, write, sync or mapping failed; after a failed write the
	// store refuses further writes.
	ErrIO = errors.New("rocketmq: store I/O error")
	// ErrMessageTooLarge: the body exceeds Config.MaxMessageSize or the record
	// (or batch) cannot fit into one commit-log segment.
	ErrMessageTooLarge = errors.New("rocketmq: message too large for the store")
	// ErrInvalidMessage: empty topic, a topic unusable as a directory name, a
	// negative queue id, or a batch that mixes queues.
	ErrInvalidMessage = errors.New("rocketmq: invalid message for the store")
	// ErrNotFound: no record at the given commit-log offset, or no message in
	// the queue.
	ErrNotFound = errors.New("rocketmq: message not found in the store")

	errBadRecord = errors.New("rocketmq: bad stored record")
	errFault     = errors.New("memory fault")
	errWrite     = errors.New("write failed")
)

// errUnsupported is returned by a file operation the platform does not have.
var errUnsupported = errors.New("not supported on this platform")
