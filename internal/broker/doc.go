// Package broker is the in-repo RocketMQ broker: send, pull with long
// polling, consumer offsets, client and group registry, admin codes, and
// registration with the NameServers. It stores messages through
// internal/store in RocketMQ's on-disk layout and serves the remoting
// protocol through internal/server.
//
// handlers.go holds the request table, and a file named NNN_name.go holds
// the whole handler of request code NNN, so the directory listing doubles
// as the protocol index; the send and pull codes delegate to the shared
// pipelines in send.go and pull.go. State has one owner per
// concern: topics (topicManager), subscription groups (groupManager),
// consumer offsets (offsetManager), client channels (clientManager) and held
// pulls (pullHold), each with its own lock; none of them calls another while
// holding its lock.
package broker
