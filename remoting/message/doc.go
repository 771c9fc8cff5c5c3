// Package message is the one implementation of RocketMQ's message binary
// formats, shared by the producer, the consumer, the broker and the store
// (docs/PROTOCOL.md §5):
//
//   - the properties string: Properties / NextProperty / PropertyValue read
//     it without allocating; AppendProperties and AppendSortedProperties
//     write it with the keys in sorted order, so the bytes are deterministic;
//     EncodeProperties and DecodeProperties convert to and from a map;
//   - the stored record (commit log, PULL and QUERY_MESSAGE bodies):
//     ScanRecord checks one record and returns a RecordView of its fields
//     and sub-slices, with no allocation; DecodeRecords and DecodeRecord make
//     rocketmq.MessageExt values; RecordFields.AppendRecord and
//     AppendMessageExt write records; the layout constants, magic codes and
//     sysFlag bits;
//   - the SEND_BATCH_MESSAGE body: BeginBatchElement / EndBatchElement
//     append one element, AppendBatch a whole batch, DecodeBatchElements and
//     DecodeBatch read one;
//   - body compression (zlib, LZ4, zstd) and its sysFlag bits;
//   - Java's String.hashCode (JavaHashCode, TagHash) and the TAG
//     subscription expression built on it.
//
// The package has no goroutines and does no I/O. The message model
// (rocketmq.Message, rocketmq.MessageExt) lives in the root package.
package message
