package remoting

// SerializeType is the header encoding of one frame (docs/PROTOCOL.md §1.1).
type SerializeType byte

const (
	SerializeJSON     SerializeType = 0
	SerializeRocketMQ SerializeType = 1
)

// LanguageCode is the sender's implementation language (docs/PROTOCOL.md §1.5).
type LanguageCode byte

const (
	LanguageJava   LanguageCode = 0
	LanguageCPP    LanguageCode = 1
	LanguageDotNet LanguageCode = 2
	LanguagePython LanguageCode = 3
	LanguageDelphi LanguageCode = 4
	LanguageErlang LanguageCode = 5
	LanguageRuby   LanguageCode = 6
	LanguageOther  LanguageCode = 7
	LanguageHTTP   LanguageCode = 8
	LanguageGo     LanguageCode = 9
	LanguagePHP    LanguageCode = 10
	LanguageOMS    LanguageCode = 11
	LanguageRust   LanguageCode = 12
	LanguageNodeJS LanguageCode = 13
)

// Flag bits of a command.
const (
	FlagResponse int32 = 0x1
	FlagOneway   int32 = 0x2
)

// Field is one extFields entry.
type Field struct {
	Key   string
	Value string
}

// ExtFields is the ordered string map of a command header. Order is kept as
// written so that fast-coded headers encode in Java's fixed order; lookups
// take the last entry with a key (a Java HashMap keeps the last copy).
//
// A nil ExtFields is "no extFields" (JSON omits the key); an empty non-nil
// one is written as "extFields":{}.
type ExtFields []Field

// Command is a RemotingCommand: one request or response frame.
type Command struct {
	Code     int32
	Language LanguageCode
	Version  int32
	Opaque   int32
	Flag     int32
	Remark   string
	Ext      ExtFields
	Body     []byte

	// Serialize is the header encoding used when this command is encoded,
	// and the one it arrived in when decoded.
	Serialize SerializeType
}

// IsResponse reports whether the response bit is set.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether the oneway bit is set.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }
