package message

import (
	"strings"
	"unicode/utf8"
)

// JavaHashCode returns Java's String.hashCode of s: h = 31*h + unit over the
// UTF-16 code units of s, with int32 wrap-around. Invalid UTF-8 bytes count
// as U+FFFD, which is what Java's UTF-8 decoder makes of them.
func JavaHashCode[T string | []byte](s T) int32 { return JavaHashCodeFrom(0, s) }

// JavaHashCodeFrom continues JavaHashCode from h, so that the hash of a
// concatenation ("topic#key" in the index) needs no string built.
func JavaHashCodeFrom[T string | []byte](h int32, s T) int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		var r rune
		var size int
		switch v := any(s[i:min(i+utf8.UTFMax, len(s))]).(type) {
		case string:
			r, size = utf8.DecodeRuneInString(v)
		case []byte:
			r, size = utf8.DecodeRune(v)
		}
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + (0xD800 + int32(r>>10))
			h = 31*h + (0xDC00 + int32(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// TagHash returns the consume-queue tagsCode of a tag (Java
// tagsString2tagsCode): its JavaHashCode widened to int64, 0 for "".
func TagHash[T string | []byte](tag T) int64 { return int64(JavaHashCode(tag)) }

// SubscriptionAll is the expression that matches every tag.
const SubscriptionAll = "*"

// Subscription is the client-side parse of a TAG subscription expression
// (Java FilterAPI.buildSubscriptionData).
type Subscription struct {
	// Expression is the expression as given, or "*" for "" and "*".
	Expression string
	// Tags and Codes are in expression order without duplicates; both are
	// empty for "*". Codes[i] is JavaHashCode(Tags[i]). Java keeps them in
	// hash sets; the broker receives them as its codeSet.
	Tags  []string
	Codes []int32
}

// BuildSubscription parses a TAG expression: "" and "*" match all;
// otherwise the expression is split at each literal "||", parts are
// trimmed and empty parts dropped. "TagA | TagB" is one tag.
func BuildSubscription(expr string) Subscription {
	if expr == "" || expr == SubscriptionAll {
		return Subscription{Expression: SubscriptionAll}
	}
	s := Subscription{Expression: expr}
	for rest := expr; ; {
		part, after, found := strings.Cut(rest, "||")
		// Java's String.trim drops characters <= ' '.
		part = strings.TrimFunc(part, func(r rune) bool { return r <= ' ' })
		if part != "" && !s.HasTag(part) {
			s.Tags = append(s.Tags, part)
			s.Codes = append(s.Codes, JavaHashCode(part))
		}
		if !found {
			break
		}
		rest = after
	}
	return s
}

// MatchAll reports whether the subscription takes every message. An
// expression without any tag, such as "||", is not "*": the broker then
// matches no hash at all.
func (s *Subscription) MatchAll() bool { return s.Expression == SubscriptionAll }

// HasTag reports whether tag is one of the subscribed tags.
func (s *Subscription) HasTag(tag string) bool {
	for _, t := range s.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// HasCode reports whether code is one of the subscribed tag hashes.
func (s *Subscription) HasCode(code int64) bool {
	for _, c := range s.Codes {
		if int64(c) == code {
			return true
		}
	}
	return false
}

// Matches reports whether a message with tag passes the client-side
// filter: everything for "*", else an exact tag match (a message without a
// tag only matches "*").
func (s *Subscription) Matches(tag string) bool {
	return s.MatchAll() || (tag != "" && s.HasTag(tag))
}
