// Package store is the broker's message store, in Apache RocketMQ's on-disk
// layout (docs/PROTOCOL.md §10), so a store directory written here has the same
// files and formats as a Java broker's.
//
// # On-disk layout
//
// All integers are big-endian. Paths are relative to Config.Dir.
//
//	commitlog/<20-digit start offset>   segments of CommitLogSegmentSize bytes (default 1 GiB), sparse
//	consumequeue/<topic>/<queueId>/<20-digit start byte offset>
//	                                    ConsumeQueueEntriesPerFile entries of 20 bytes (default 300000)
//	index/<yyyyMMddHHmmssSSS>           40 + IndexSlots*4 + IndexEntries*20 bytes, named by creation time
//	checkpoint                          4096 bytes
//	abort                               exists while a Store has the directory open (holds the pid)
//	lock                                exclusive lock (flock; LockFileEx on Windows) held for the Store's lifetime
//	deletedTopics.json                  topic -> commit-log offset at DeleteTopic (not in Java's layout)
//	config/*.json (+ .bak)              owned by the broker, written with WriteConfigFile
//
// CommitLog: records in the stored-message layout of docs/PROTOCOL.md §5.5, back
// to back. A record never spans two segments: when record+8 bytes do not fit,
// the rest of the segment is a blank marker (int32 remaining size, int32
// 0xCBD43194) and the record starts the next segment, named by its start
// offset. The end of data is the first zero size/magic. queueOffset,
// physicalOffset and storeTimestamp are assigned at append time and patched
// into the record; PREPARED and ROLLBACK transaction records get queue
// offset 0 and no consume-queue entry.
//
// ConsumeQueue: per (topic, queueId), entry n (commit-log offset int64,
// record size int32, tags code int64) at byte n*20 of the queue's address
// space. A queue starting above 0 pads its first file with filler entries
// (0, 0x7FFFFFFF, 0).
//
// IndexFile: header (begin/end store time, begin/end commit-log offset,
// used slot count, next entry number starting at 1), a slot table of the
// newest entry number per |hashCode("topic#key")| % IndexSlots, and entries
// (key hash, commit-log offset, seconds since the file's begin time, previous
// entry in the slot). Keys are UNIQ_KEY and every space-separated KEYS
// element; ROLLBACK records are not indexed.
//
// Checkpoint: physicMsgTimestamp, logicsMsgTimestamp, indexMsgTimestamp at
// bytes 0, 8, 16: the store time of the newest message whose commit-log
// record, queue entries and index entries were all synced.
//
// # Writing and reading
//
// Every file is mapped shared and read-write; an append is a copy into the
// mapping (in FlushSync mode a pwrite of the commit-log record, which makes
// the group commit's fdatasync several times shorter), so an acknowledged
// message is in the page cache and survives the death of the process. One
// writer (Store.mu) appends: it encodes the record outside the lock, then
// assigns offsets, copies (the size field last), writes the consume-queue
// entry and index entries, and publishes the new end. A message is readable
// when PutMessage returns; Config.OnDispatch is then called outside all
// locks. Readers use atomics and the shared life lock, never the writer
// lock. In FlushAsync mode a background goroutine faults commit-log pages
// in ahead of the writer.
//
// Platforms: on Unix the files are mapped with mmap; on Windows with a
// file mapping (CreateFileMapping, MapViewOfFile) and synced with
// FlushViewOfFile and FlushFileBuffers. A sync is fdatasync on Linux,
// F_FULLFSYNC on macOS. Blocks are reserved ahead of every write through a
// mapping (reserve.go): with fallocate on Linux, by writing zeros where the
// file system cannot, and by NTFS itself on Windows. They are freed with
// hole punching on Linux only; elsewhere a cleared tail is zeroed in place
// (sys_*.go).
//
// Durability: FlushAsync syncs the commit log every FlushInterval. FlushSync
// with PutRequest.WaitFlush waits for a sync covering the record; one flush
// goroutine serves all waiters (group commit) and a wait longer than
// SyncFlushTimeout gives PutFlushDiskTimeout. A caller that must not block
// puts without WaitFlush, asks for a round with RequestFlush and watches
// FlushProgress (the broker's sync-flush sends do). Every CheckpointInterval the
// queue and index files written since the last round are synced and the
// checkpoint written.
//
// # Recovery
//
// Open takes the lock, maps everything, and creates the abort file. A clean
// previous shutdown (no abort file) walks only the last segment, checking
// record headers. After a crash it walks, checking body CRCs, from the
// newest segment whose first message is older than the checkpoint (minus
// 3 s, like Java). The walk stops at the first invalid record: the rest of
// that segment is zeroed and later segments are renamed *.corrupt-<ns>
// (never deleted); queue entries past the end are dropped. Each walked record
// gets its queue entry (an existing matching one is kept; a different one is
// replaced with the rest of the queue) and its index entries if they are
// newer than the index. A consume queue that is malformed (bad file names
// or sizes, implausible or out-of-order entries), that misses entries, or
// whose entries disagree with the records they point to is removed and
// rebuilt from the whole commit log. A middle commit-log segment of the
// wrong size or a gap between segments is refused (ErrCorrupt) without
// touching anything; a last segment of the wrong size is a torn tail.
//
// # Lock order
//
// Store.mu (writer), then Store.life (shared by readers, exclusive to unmap:
// Close, Crash, DeleteTopic, queue-map insertion), then indexService.mu.
// Store.syncMu serialises commit-log syncs; it is taken alone, or under mu
// by Close's final checkpoint. genMu only guards the flush-round channel.
package store
