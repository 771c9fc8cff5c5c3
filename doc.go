// Package rocketmq holds the message model shared by the producer, the
// consumers, the admin client and the in-repo broker: Message, MessageExt,
// MessageQueue, SendResult, the property keys, the message binary formats
// (properties string, batch layout, stored record layout, compression),
// message identifiers and the Java-compatible tag hash.
//
// Formats follow what Apache RocketMQ 4.9.8 writes (PROTOCOL.md §5–§7):
//
//   - Properties strings are written without the final 0x02 and with keys
//     sorted (Java writes HashMap order, which means nothing); every form is
//     read (EncodeProperties, AppendProperties, DecodeProperties).
//   - Stored records (commit log, PULL bodies) are read in magic v1 and v2,
//     with IPv4 or IPv6 hosts (DecodeRecords, DecodeRecord, DecodeOptions)
//     and written with RecordFields.AppendRecord or MessageExt.AppendRecord.
//     Decoded bodies alias the input; see DecodeOptions.DecodeRecords.
//   - Batch bodies: AppendBatch, DecodeBatch, DecodeBatchElements.
//   - Bodies are compressed with zlib, LZ4 frames or zstd as the sysFlag
//     type bits say (Compress, CompressWith, Decompress), with a cap on the
//     inflated size.
//   - Ids: UniqIDGenerator makes UNIQ_KEYs in the Java layout; offset ids
//     are EncodeOffsetMsgID / DecodeOffsetMsgID.
//   - TagHash and BuildSubscription reproduce Java's String.hashCode tag
//     codes and subscription parsing; ValidateTopic and friends return
//     Java's texts.
//
// The package has no goroutines, no sockets and no package-level mutable
// state.
package rocketmq
