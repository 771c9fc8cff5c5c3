// Package rocketmq holds the message model shared by the producer, the
// consumers, the admin client and the in-repo broker: Message, MessageExt,
// MessageQueue, SendResult, the property keys, the message binary formats
// (properties string, batch layout, stored record layout, compression),
// message identifiers and the Java-compatible tag hash.
//
// The package has no goroutines and no sockets.
package rocketmq
