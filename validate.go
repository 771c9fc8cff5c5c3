package rocketmq

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Sentinels of the validators; a *ValidationError wraps one of them.
var (
	ErrBlankName           = errors.New("rocketmq: blank topic or group name")
	ErrNameTooLong         = errors.New("rocketmq: topic or group name too long")
	ErrIllegalName         = errors.New("rocketmq: topic or group name has illegal characters")
	ErrSystemTopic         = errors.New("rocketmq: topic conflicts with a system topic")
	ErrNotAllowedSendTopic = errors.New("rocketmq: sending to this topic is forbidden")
	ErrNilMessage          = errors.New("rocketmq: message is nil")
	ErrNilBody             = errors.New("rocketmq: message body is nil")
	ErrEmptyBody           = errors.New("rocketmq: message body is empty")
	ErrBodyTooLarge        = errors.New("rocketmq: message body too large")
)

// ValidationError is a failed check. Reason is the text the Java client or
// broker uses for the same failure (a broker puts it in the remark).
type ValidationError struct {
	Reason string
	Err    error
}

func (e *ValidationError) Error() string { return "rocketmq: " + e.Reason }
func (e *ValidationError) Unwrap() error { return e.Err }

func invalid(err error, format string, args ...any) error {
	return &ValidationError{Reason: fmt.Sprintf(format, args...), Err: err}
}

// ValidNamePattern is the allowed alphabet of topic and group names.
const ValidNamePattern = "^[%|a-zA-Z0-9_-]+$"

// IsTopicOrGroupIllegal reports whether name has a character outside
// ValidNamePattern. The empty name is not illegal (it is blank).
func IsTopicOrGroupIllegal(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '%', c == '|', c == '_', c == '-':
		default:
			return true
		}
	}
	return false
}

// ValidateTopic checks a topic as the Java client does (Validators.checkTopic):
// blank, then longer than TopicMaxLength, then illegal characters.
func ValidateTopic(topic string) error {
	if javaIsBlank(topic) {
		return invalid(ErrBlankName, "The specified topic is blank")
	}
	if javaLength(topic) > TopicMaxLength {
		return invalid(ErrNameTooLong, "The specified topic is longer than topic max length %d.", TopicMaxLength)
	}
	if IsTopicOrGroupIllegal(topic) {
		return invalid(ErrIllegalName, "The specified topic[%s] contains illegal characters, allowing only %s", topic, ValidNamePattern)
	}
	return nil
}

// ValidateGroup checks a group name as the Java 4.x client does
// (Validators.checkGroup): blank, longer than GroupMaxLength, illegal
// characters.
func ValidateGroup(group string) error {
	if javaIsBlank(group) {
		return invalid(ErrBlankName, "the specified group is blank")
	}
	if javaLength(group) > GroupMaxLength {
		return invalid(ErrNameTooLong, "the specified group is longer than group max length %d.", GroupMaxLength)
	}
	if IsTopicOrGroupIllegal(group) {
		return invalid(ErrIllegalName, "the specified group[%s] contains illegal characters, allowing only %s", group, ValidNamePattern)
	}
	return nil
}

// CheckSendAllowed fails for the topics clients may not send to (a broker
// answers NO_PERMISSION with Reason as remark).
func CheckSendAllowed(topic string) error {
	if IsNotAllowedSendTopic(topic) {
		return invalid(ErrNotAllowedSendTopic, "Sending message to topic[%s] is forbidden.", topic)
	}
	return nil
}

// ValidateMessage checks a message before sending, as Java's
// Validators.checkMessage: topic, forbidden topic, then the body: not nil,
// not empty, at most maxBodySize bytes (<= 0 means DefaultMaxMessageSize).
func ValidateMessage(m *Message, maxBodySize int) error {
	if m == nil {
		return invalid(ErrNilMessage, "the message is null")
	}
	if err := ValidateTopic(m.Topic); err != nil {
		return err
	}
	if err := CheckSendAllowed(m.Topic); err != nil {
		return err
	}
	if m.Body == nil {
		return invalid(ErrNilBody, "the message body is null")
	}
	if len(m.Body) == 0 {
		return invalid(ErrEmptyBody, "the message body length is zero")
	}
	if maxBodySize <= 0 {
		maxBodySize = DefaultMaxMessageSize
	}
	if len(m.Body) > maxBodySize {
		return invalid(ErrBodyTooLarge, "the message body size over max value, MAX: %d", maxBodySize)
	}
	return nil
}

// javaLength is Java's String.length(): UTF-16 code units.
func javaLength(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// javaIsBlank is UtilAll.isBlank: empty or only Character.isWhitespace.
func javaIsBlank(s string) bool {
	for _, r := range s {
		if !javaIsWhitespace(r) {
			return false
		}
	}
	return true
}

// javaIsWhitespace is Character.isWhitespace: Unicode space separators
// except the no-break ones, line and paragraph separators, and the ASCII
// controls \t \n \v \f \r and 0x1C-0x1F.
func javaIsWhitespace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1C && r <= 0x1F:
		return true
	case r == 0xA0 || r == 0x2007 || r == 0x202F:
		return false
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}
