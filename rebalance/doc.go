// Package rebalance decides which message queues of a topic one consumer
// of a clustering group should pull from (docs/PROTOCOL.md §8.6).
//
// Every strategy implements Strategy. Allocate is a pure function of its
// arguments: it keeps no state between calls, starts no goroutines and
// does no I/O, so a consumer can call it on every rebalance (every 20 s and
// on NOTIFY_CONSUMER_IDS_CHANGED) for every topic it subscribes to.
//
// The strategies reproduce the Java client 4.9.8 allocators result for
// result, so Go and Java consumers can share one group:
//
//	Averagely          AVG              AllocateMessageQueueAveragely (Java's default)
//	AveragelyByCircle  AVG_BY_CIRCLE    AllocateMessageQueueAveragelyByCircle
//	ConsistentHash     CONSISTENT_HASH  AllocateMessageQueueConsistentHash
//	ByConfig           CONFIG           AllocateMessageQueueByConfig
//	ByMachineRoom      MACHINE_ROOM     AllocateMessageQueueByMachineRoom
//	MachineRoomNearby  MACHINE_ROOM_NEARBY-<inner>  AllocateMachineRoomNearby
//
// As in Java, a strategy takes mqAll and cidAll in the order it is given
// and does not sort them. Every consumer of a group must pass the same
// order, which is why the caller sorts both first with SortQueues and
// SortClientIDs (Java's RebalanceImpl does the same).
//
// Java throws for an empty current id, an empty mqAll or an empty cidAll;
// here Allocate returns nil instead and Validate reports the reason. Java's
// RebalanceImpl keeps the previous assignment when allocate throws, so a
// caller that wants that behaviour calls Validate first.
package rebalance
