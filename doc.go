// Package rocketmq holds the message model shared by the producer, the
// consumers, the admin client and the in-repo broker: Message, MessageExt,
// MessageQueue, SendResult, the property keys, message identifiers, the
// well-known topic and group names, and the checks of what a client sends.
//
//   - Message accessors read and write the system properties (Tag, Keys,
//     DelayLevel, UniqKey, ...); build a message with producer.NewMessage.
//   - Ids: UniqIDGenerator makes UNIQ_KEYs in the Java layout; offset ids
//     are EncodeOffsetMsgID / DecodeOffsetMsgID (docs/PROTOCOL.md §6).
//   - ValidateTopic, ValidateGroup, ValidateMessage, CheckProperty and
//     CheckSendAllowed return the Java client's texts.
//
// The binary formats (properties string, stored record, batch body,
// compression, tag hash) are in package remoting/message, which uses this
// model; this package does not import it.
//
// The package has no goroutines, no sockets and no package-level mutable
// state.
package rocketmq
