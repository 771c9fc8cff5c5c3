// Package ha is the classic master/slave replication of a 4.9.8 broker
// (HAService, HAConnection), byte-compatible with Java brokers on the HA
// port (docs/PROTOCOL.md §11.2).
//
// A Master listens on the HA port and streams its commit log to each slave
// that connects, from the offset the slave first reports, in frames of an
// 8-byte big-endian start offset, a 4-byte length and that many commit-log
// bytes; a frame of length 0 is a heartbeat. A Slave connects to its master,
// reports its commit log's max offset as 8 big-endian bytes (on connect,
// after each chunk it appended and at least every heartbeat interval) and
// appends what it receives at exactly the offsets the master names.
//
// The package knows nothing of records: the master reads raw bytes through
// Source and the slave writes them through Replica (internal/store
// implements both). It has no package state; each Master and Slave owns
// its goroutines and Close waits for all of them.
package ha
