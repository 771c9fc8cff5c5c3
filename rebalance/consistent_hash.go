package rebalance

import (
	"cmp"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
)

// DefaultVirtualNodes is the number of ring points per consumer that Java's
// AllocateMessageQueueConsistentHash() uses.
const DefaultVirtualNodes = 10

// HashFunc maps a ring key to a point on the hash ring. Points are ordered
// as signed 64-bit numbers, like the Long keys of Java's ring.
type HashFunc func(key string) int64

// MD5Hash is the ring hash Java uses by default: the first 4 bytes of the
// MD5 of the UTF-8 key, read as an unsigned big-endian number.
func MD5Hash(key string) int64 {
	return md5Prefix([]byte(key))
}

func md5Prefix(b []byte) int64 {
	sum := md5.Sum(b)
	return int64(binary.BigEndian.Uint32(sum[:4]))
}

// ConsistentHash places every consumer on a hash ring at a number of
// virtual points and gives each queue to the consumer owning the first
// point at or after the queue's hash (CONSISTENT_HASH). A consumer joining
// or leaving moves few queues, at the price of an uneven spread.
//
// The ring key of consumer c's i-th point is c + "-" + i, and a queue's key
// is QueueString(mq), as in Java's ConsistentHashRouter. Where two points
// hash alike, the one added later wins, as with Java's TreeMap.put.
type ConsistentHash struct {
	virtualNodes int
	hash         HashFunc // nil: MD5Hash without allocating the key
}

// ConsistentHashOption configures NewConsistentHash.
type ConsistentHashOption func(*ConsistentHash)

// WithVirtualNodes sets the number of ring points per consumer. The default
// is DefaultVirtualNodes (10). Zero is allowed and assigns nothing, as in
// Java; a negative count makes NewConsistentHash fail.
func WithVirtualNodes(n int) ConsistentHashOption {
	return func(s *ConsistentHash) { s.virtualNodes = n }
}

// WithHashFunc replaces the ring hash (Java's customHashFunction). The
// default is MD5Hash. Every consumer of the group must use the same one.
func WithHashFunc(h HashFunc) ConsistentHashOption {
	return func(s *ConsistentHash) { s.hash = h }
}

// NewConsistentHash returns a consistent-hash strategy.
func NewConsistentHash(opts ...ConsistentHashOption) (*ConsistentHash, error) {
	s := &ConsistentHash{virtualNodes: DefaultVirtualNodes}
	for _, o := range opts {
		o(s)
	}
	if s.virtualNodes < 0 {
		return nil, fmt.Errorf("%w: %d", ErrVirtualNodes, s.virtualNodes)
	}
	return s, nil
}

// Name returns "CONSISTENT_HASH" whatever the virtual node count, as Java.
func (*ConsistentHash) Name() string { return "CONSISTENT_HASH" }

// VirtualNodes returns the number of ring points per consumer.
func (s *ConsistentHash) VirtualNodes() int { return s.virtualNodes }

// ringPoint is one virtual node: its hash and the index in cidAll of the
// consumer that put it on the ring.
type ringPoint struct {
	hash  int64
	owner int
}

// Allocate implements Strategy.
func (s *ConsistentHash) Allocate(_, currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) []rocketmq.MessageQueue {
	if consumerIndex(currentCID, mqAll, cidAll) < 0 {
		return nil
	}
	key := make([]byte, 0, 96) // fits typical ring and queue keys
	ring := s.ring(cidAll, &key)
	if len(ring) == 0 {
		return nil
	}
	var out []rocketmq.MessageQueue
	for _, mq := range mqAll {
		key = appendQueueString(key[:0], mq)
		h := s.sum(key)
		i, _ := slices.BinarySearchFunc(ring, h, func(p ringPoint, h int64) int { return cmp.Compare(p.hash, h) })
		if i == len(ring) {
			i = 0 // wrap around
		}
		if cidAll[ring[i].owner] == currentCID {
			out = append(out, mq)
		}
	}
	return out
}

func (s *ConsistentHash) sum(key []byte) int64 {
	if s.hash == nil {
		return md5Prefix(key)
	}
	return s.hash(string(key))
}

// ring builds the sorted ring, one point per hash, the later insertion
// winning a collision. key is scratch space shared with the caller.
func (s *ConsistentHash) ring(cidAll []string, key *[]byte) []ringPoint {
	points := make([]ringPoint, 0, len(cidAll)*s.virtualNodes)
	var seen map[string]struct{}
	if len(cidAll) > 1 {
		seen = make(map[string]struct{}, len(cidAll))
	}
	for owner, cid := range cidAll {
		// Java numbers a repeated consumer's points after the ones it
		// already has on the ring; a group normally has no duplicates.
		first := 0
		if seen != nil {
			if _, dup := seen[cid]; dup {
				first = ownedPoints(points, cidAll, cid)
			}
			seen[cid] = struct{}{}
		}
		for i := range s.virtualNodes {
			*key = append(append((*key)[:0], cid...), '-')
			*key = strconv.AppendInt(*key, int64(first+i), 10)
			points = append(points, ringPoint{hash: s.sum(*key), owner: owner})
		}
	}
	// Stable, so equal hashes stay in insertion order and the last one wins.
	slices.SortStableFunc(points, func(a, b ringPoint) int { return cmp.Compare(a.hash, b.hash) })
	out := points[:0]
	for i, p := range points {
		if i+1 < len(points) && points[i+1].hash == p.hash {
			continue
		}
		out = append(out, p)
	}
	return out
}

// ownedPoints counts the points of the ring built from points (in
// insertion order, later ones overwriting) that belong to cid.
func ownedPoints(points []ringPoint, cidAll []string, cid string) int {
	last := make(map[int64]int, len(points))
	for _, p := range points {
		last[p.hash] = p.owner
	}
	n := 0
	for _, owner := range last {
		if cidAll[owner] == cid {
			n++
		}
	}
	return n
}
