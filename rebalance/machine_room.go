package rebalance

import (
	"slices"
	"strings"

	"github.com/go-rocketmq/rocketmq"
)

// ByMachineRoom keeps only the queues of brokers named "<idc>@<name>" whose
// idc is one of the consumer's idcs, then splits them into contiguous
// blocks, the remainder going one each to the first consumers
// (MACHINE_ROOM, Java's AllocateMessageQueueByMachineRoom).
type ByMachineRoom struct {
	idcs []string
}

// NewByMachineRoom returns a strategy that consumes only from brokers in the
// given machine rooms (Java's consumeridcs).
func NewByMachineRoom(idcs ...string) *ByMachineRoom {
	return &ByMachineRoom{idcs: slices.Clone(idcs)}
}

// Name returns "MACHINE_ROOM".
func (*ByMachineRoom) Name() string { return "MACHINE_ROOM" }

// Allocate implements Strategy.
func (s *ByMachineRoom) Allocate(_, currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) []rocketmq.MessageQueue {
	index := consumerIndex(currentCID, mqAll, cidAll)
	if index < 0 {
		return nil
	}
	var pre []rocketmq.MessageQueue
	for _, mq := range mqAll {
		if idc, ok := brokerIDC(mq.BrokerName); ok && slices.Contains(s.idcs, idc) {
			pre = append(pre, mq)
		}
	}
	c := len(cidAll)
	size, rem := len(pre)/c, len(pre)%c
	start := size * index
	var out []rocketmq.MessageQueue
	if size > 0 {
		out = slices.Clone(pre[start : start+size])
	}
	if index < rem {
		out = append(out, pre[index+size*c])
	}
	return out
}

// brokerIDC splits a broker name the way Java's brokerName.split("@") does
// and reports the idc when that gives exactly two parts. Java drops
// trailing empty parts, so "hz@b@" counts as two parts and "hz@" as one.
func brokerIDC(brokerName string) (string, bool) {
	at := strings.IndexByte(brokerName, '@')
	if at < 0 {
		return "", false
	}
	rest := brokerName[at+1:]
	name := rest
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		name = rest[:i]
	}
	if name == "" || strings.Trim(rest[len(name):], "@") != "" {
		return "", false
	}
	return brokerName[:at], true
}

// MachineRoomResolver tells MachineRoomNearby where brokers and consumers
// run. Both methods must return a non-empty room name.
type MachineRoomResolver interface {
	// BrokerRoom returns the machine room of the broker serving mq.
	BrokerRoom(mq rocketmq.MessageQueue) string
	// ConsumerRoom returns the machine room of the consumer clientID.
	ConsumerRoom(clientID string) string
}

// MachineRoomNearby wraps another strategy so that the queues of a machine
// room go only to the consumers in that room, while the queues of rooms
// with no consumer are shared by all consumers (Java's
// AllocateMachineRoomNearby). The inner strategy runs once on the
// consumer's own room and once on each room without consumers, in room name
// order, and the results are concatenated.
type MachineRoomNearby struct {
	inner    Strategy
	resolver MachineRoomResolver
}

// NewMachineRoomNearby returns inner made machine-room aware.
func NewMachineRoomNearby(inner Strategy, resolver MachineRoomResolver) (*MachineRoomNearby, error) {
	if inner == nil {
		return nil, ErrNilStrategy
	}
	if resolver == nil {
		return nil, ErrNilResolver
	}
	return &MachineRoomNearby{inner: inner, resolver: resolver}, nil
}

// Name returns "MACHINE_ROOM_NEARBY-" followed by the inner strategy's name.
func (s *MachineRoomNearby) Name() string { return "MACHINE_ROOM_NEARBY-" + s.inner.Name() }

type roomQueues struct {
	room string
	mqs  []rocketmq.MessageQueue
}

// Allocate implements Strategy. It returns nil if the resolver names an
// empty room for any queue or consumer (Java throws there).
func (s *MachineRoomNearby) Allocate(group, currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) []rocketmq.MessageQueue {
	if consumerIndex(currentCID, mqAll, cidAll) < 0 {
		return nil
	}
	var rooms []roomQueues // few rooms: a linear scan beats a map
	for _, mq := range mqAll {
		room := s.resolver.BrokerRoom(mq)
		if room == "" {
			return nil
		}
		i := slices.IndexFunc(rooms, func(r roomQueues) bool { return r.room == room })
		if i < 0 {
			i = len(rooms)
			rooms = append(rooms, roomQueues{room: room})
		}
		rooms[i].mqs = append(rooms[i].mqs, mq)
	}
	slices.SortFunc(rooms, func(a, b roomQueues) int { return compareJavaStrings(a.room, b.room) })

	cidRooms := make([]string, len(cidAll))
	for i, cid := range cidAll {
		if cidRooms[i] = s.resolver.ConsumerRoom(cid); cidRooms[i] == "" {
			return nil
		}
	}
	myRoom := s.resolver.ConsumerRoom(currentCID)

	var out []rocketmq.MessageQueue
	for _, r := range rooms {
		if r.room != myRoom {
			continue
		}
		var local []string
		for i, cid := range cidAll {
			if cidRooms[i] == myRoom {
				local = append(local, cid)
			}
		}
		out = append(out, s.inner.Allocate(group, currentCID, r.mqs, local)...)
	}
	// The consumer's own room always has a consumer, so it is skipped here.
	for _, r := range rooms {
		if !slices.Contains(cidRooms, r.room) {
			out = append(out, s.inner.Allocate(group, currentCID, r.mqs, cidAll)...)
		}
	}
	return out
}
