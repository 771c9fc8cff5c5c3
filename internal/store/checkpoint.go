package store

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// checkpointSize is the size of the checkpoint file (docs/PROTOCOL.md §10.3).
const checkpointSize = 4096

// checkpoint holds the store timestamps up to which the commit log, the
// consume queues and the index are known to be on disk.
type checkpoint struct {
	physicMsgTimestamp int64
	logicsMsgTimestamp int64
	indexMsgTimestamp  int64
}

// minTimestamp is where abnormal recovery may start scanning: Java's
// StoreCheckpoint.getMinTimestampIndex, including its 3 s safety margin.
func (c checkpoint) minTimestamp() int64 {
	m := min(c.physicMsgTimestamp, c.logicsMsgTimestamp, c.indexMsgTimestamp) - 3000
	return max(m, 0)
}

func readCheckpoint(f *os.File) (checkpoint, error) {
	var b [40]byte
	n, err := f.ReadAt(b[:], 0)
	if err != nil && err != io.EOF {
		return checkpoint{}, fmt.Errorf("%w: read checkpoint: %v", ErrIO, err)
	}
	if n < 24 {
		return checkpoint{}, nil
	}
	be := binary.BigEndian
	return checkpoint{
		physicMsgTimestamp: int64(be.Uint64(b[0:])),
		logicsMsgTimestamp: int64(be.Uint64(b[8:])),
		indexMsgTimestamp:  int64(be.Uint64(b[16:])),
	}, nil
}

func writeCheckpoint(f *os.File, c checkpoint) error {
	var b [checkpointSize]byte
	be := binary.BigEndian
	be.PutUint64(b[0:], uint64(c.physicMsgTimestamp))
	be.PutUint64(b[8:], uint64(c.logicsMsgTimestamp))
	be.PutUint64(b[16:], uint64(c.indexMsgTimestamp))
	if _, err := f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("%w: write checkpoint: %v", ErrIO, err)
	}
	if err := rawControlSync(f); err != nil {
		return fmt.Errorf("%w: sync checkpoint: %v", ErrIO, err)
	}
	return nil
}

func rawControlSync(f *os.File) error {
	var serr error
	if err := rawControl(f, func(fd uintptr) { serr = fdatasync(fd) }); err != nil {
		return err
	}
	return serr
}
