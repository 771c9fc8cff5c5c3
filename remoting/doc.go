// Package remoting is the RocketMQ remoting wire codec shared by the client
// and the in-repo servers: frames, the two header serializations, request
// and response codes, the wire error type and ACL signing. It has no
// goroutines and no networking.
//
// # Frames
//
// A frame is a 4-byte big-endian length, a header word (serialize type in
// the high byte, header length in the low 24 bits), the header and the body
// (docs/PROTOCOL.md §1.1). [Command.AppendFrame] appends one to a buffer;
// [DecodeFrame] decodes one from the front of a buffer, returning
// [ErrIncomplete] until the whole frame is there, and checks the length
// prefix against the maximum before allocating; [FrameSize] gives the size
// of the next frame as soon as its prefix has arrived. Bad or oversized
// frames are a [*FrameError] (errors.Is with [ErrMalformedFrame] or
// [ErrFrameTooLarge]); the connection cannot be resynchronised after one.
//
// A decoded [Command] owns its memory, so the input buffer can be reused at
// once: the command and its fields are one allocation, all strings are cut
// from one copy of the header, and the body is copied once into its own
// allocation (keeping a header string never pins a large body).
// [Command.AppendFrameHeader] writes everything but the body, for writev.
//
// # Headers
//
// JSON headers (serializeType 0) are written the way fastjson writes them
// for Java: top-level keys alphabetical, null remark and extFields left out,
// language by name, the same string escapes. extFields are written in slice
// order; Java writes them in HashMap order, which carries no meaning, so a
// command built by hand matches Java's bytes only with at most one extField
// or when its order happens to be Java's (a decoded command keeps the wire
// order and re-encodes byte for byte). Two differences remain: an empty
// Remark is left out (Java writes "remark":"" for an empty non-null one),
// and an unknown language code is written as a number. The reader accepts
// keys in any order, whitespace, unknown keys, quoted numbers, null, and
// number or boolean extField values; an unknown language name decodes as
// LanguageOther.
//
// ROCKETMQ binary headers (serializeType 1) follow Java's layout. The code
// and version are int16 on the wire: Java truncates codes above 32767 and so
// does the encoder here, so commands with such codes (the 5.x POP codes)
// must use JSON. Zero-length remarks, keys and values decode as absent, as
// they do in Java. Repeated keys, which Java ACL-signed fast-coded headers
// carry (docs/PROTOCOL.md §1.4), are kept in wire order; [ExtFields.Get] and
// [ExtFields.Map] return the last copy like Java's HashMap, and
// [ExtFields.Dedup] folds them. The encoder writes the slice as it is.
//
// # Codes and errors
//
// Request and response codes are int32 constants named after their Java
// names in CamelCase, with no prefix or suffix: SendMessageV2 (310),
// PullMessage (11), GetRouteInfoByTopic (105); Success (0), SystemBusy (2),
// TopicNotExist (17), PullNotFound (19). No request name equals a response
// name; should a new one collide, the response constant gets a Resp suffix.
// [RequestCodeName] and [ResponseCodeName] give the Java names for logs.
//
// A non-success reply becomes an [*Error] through [ResponseError]. Errors
// compare by code, so errors.Is(err, ErrSystemBusy) works whatever the
// remark. [IsRetriable] applies the Java producer's retry rules.
//
// # ACL
//
// [SignACL] signs a request like Java's AclClientRPCHook, except that the
// field _UNIQUE_KEY_QUERY is never part of the signed content, which is what
// every 4.x broker checks (docs/PROTOCOL.md §8.13); [SignACLAllFields] signs it
// too, as a 5.1+ broker expects from clients above version 399. [VerifyACL]
// is the broker side, built like 4.9.8's PlainAccessValidator.
package remoting
