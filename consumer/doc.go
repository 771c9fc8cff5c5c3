// Package consumer will hold the push consumer (concurrent and orderly
// listeners) and the pull consumer of RocketMQ (docs/PROTOCOL.md §8), on
// the client core every client package shares: route cache, heartbeats,
// and the server requests a consumer answers (NOTIFY_CONSUMER_IDS_CHANGED,
// GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY,
// RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_STATUS_FROM_CLIENT).
//
// This version holds the configuration only: the Option type, the options
// shared with the producer and the admin package (WithNameServers,
// WithNamespace, WithACL, WithTLS, WithLogger, ...; same names, meaning
// and defaults in all three) and the consumer group. The clients
// themselves come next.
package consumer
