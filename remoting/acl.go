package remoting

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"log/slog"
	"slices"
	"unicode/utf8"
)

// ACL extField names (docs/PROTOCOL.md §8.13).
const (
	ACLAccessKey     = "AccessKey"
	ACLSecurityToken = "SecurityToken"
	ACLSignature     = "Signature"
	// UniqueKeyQuery is the QUERY_MESSAGE flag that 4.x brokers leave out of
	// the signed content.
	UniqueKeyQuery = "_UNIQUE_KEY_QUERY"
)

// ErrACL is wrapped by every VerifyACL failure. The Java broker answers
// such a request with SYSTEM_ERROR and the failure text as remark; such an
// answer, as an *Error, matches ErrACL under errors.Is.
var ErrACL = errors.New("rocketmq: acl check failed")

// aclExceptionClass starts the remark of a broker's ACL refusal.
const aclExceptionClass = "org.apache.rocketmq.acl.common.AclException"

// ACLCredentials are the access key, secret key and optional security
// token of an ACL account. The secret key never goes on the wire.
type ACLCredentials struct {
	AccessKey     string
	SecretKey     string
	SecurityToken string
}

// String shows the access key only: credentials printed or logged never
// reveal the secret key or the security token.
func (c ACLCredentials) String() string {
	s := "AccessKey=" + c.AccessKey + " SecretKey=<hidden>"
	if c.SecurityToken != "" {
		s += " SecurityToken=<hidden>"
	}
	return s
}

// GoString is String, for %#v.
func (c ACLCredentials) GoString() string { return "remoting.ACLCredentials{" + c.String() + "}" }

// LogValue is String, for log/slog.
func (c ACLCredentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// SignACL adds AccessKey (and SecurityToken when set) to cmd.Ext and sets
// Signature, as Java's AclClientRPCHook does: HMAC-SHA1 keyed with the
// secret over the values of all extFields sorted by key (UTF-16 order),
// followed by the body, in standard base64.
//
// Unlike the 4.9.8 Java client, the value of _UNIQUE_KEY_QUERY is not
// signed, which is what 4.x and 5.0 brokers (and 5.1+ brokers for clients
// claiming version <= 399) verify: a Java client's QUERY_MESSAGE by unique
// key fails there, ours passes. Callers may add that field before or after
// signing; the result is the same. A 5.1+ broker signs the field for
// clients claiming a version above 399 (DefaultVersion is 409): use
// SignACLAllFields for those. Sign after the typed header has been put into
// cmd.Ext and after any later change to it.
func SignACL(cmd *Command, cred ACLCredentials) {
	signACL(cmd, cred, true)
}

// SignACLAllFields signs like the 4.9.4+ Java client: _UNIQUE_KEY_QUERY,
// when present, is signed too. That is what a 5.1+ broker checks from a
// client whose version is above 399; 4.x brokers reject it.
func SignACLAllFields(cmd *Command, cred ACLCredentials) {
	signACL(cmd, cred, false)
}

func signACL(cmd *Command, cred ACLCredentials, skipUnique bool) {
	if cmd.Ext == nil {
		cmd.Ext = make(ExtFields, 0, 3)
	}
	cmd.Ext.Set(ACLAccessKey, cred.AccessKey)
	if cred.SecurityToken != "" {
		cmd.Ext.Set(ACLSecurityToken, cred.SecurityToken)
	}
	cmd.Ext.Set(ACLSignature, aclSign(aclContent(cmd.Ext, cmd.Body, skipUnique), cred.SecretKey))
}

// VerifyACL checks a request's signature like a 4.9.8 broker
// (PlainAccessValidator): the content is every extField except Signature
// and _UNIQUE_KEY_QUERY, sorted by key, values concatenated, then the body.
// secretKey returns the secret of an access key. The error wraps ErrACL.
// Repeated keys (ROCKETMQ frames of ACL-signed fast-coded headers) count
// once, with their last value.
func VerifyACL(cmd *Command, secretKey func(accessKey string) (secret string, ok bool)) error {
	ak, ok := cmd.Ext.Get(ACLAccessKey)
	if !ok || ak == "" {
		return aclErr("No accessKey is configured")
	}
	sig, ok := cmd.Ext.Get(ACLSignature)
	if !ok || sig == "" {
		return aclErr("No signature is configured for accessKey=" + ak)
	}
	sk, ok := secretKey(ak)
	if !ok {
		return aclErr("No acl config for " + ak)
	}
	want := ACLSignatureOf(cmd.Ext, cmd.Body, sk)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return aclErr("Check signature failed for accessKey=" + ak)
	}
	return nil
}

type aclError struct{ msg string }

func (e *aclError) Error() string { return ErrACL.Error() + ": " + e.msg }
func (e *aclError) Unwrap() error { return ErrACL }

func aclErr(msg string) error { return &aclError{msg: msg} }

// ACLSignatureOf computes the signature over ext and body that a 4.x broker
// expects: Signature and _UNIQUE_KEY_QUERY excluded.
func ACLSignatureOf(ext ExtFields, body []byte, secretKey string) string {
	return aclSign(aclContent(ext, body, true), secretKey)
}

func aclSign(content []byte, secretKey string) string {
	m := hmac.New(sha1.New, []byte(secretKey))
	m.Write(content)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// aclContent builds the signed bytes: values sorted by key, Signature left
// out, _UNIQUE_KEY_QUERY left out when skipUnique, then the body. Keys are
// deduplicated with the last value winning, as Java's HashMap does.
func aclContent(ext ExtFields, body []byte, skipUnique bool) []byte {
	fs := make([]Field, 0, len(ext))
	for _, f := range ext.Dedup() {
		if f.Key == ACLSignature || (skipUnique && f.Key == UniqueKeyQuery) {
			continue
		}
		fs = append(fs, f)
	}
	slices.SortFunc(fs, func(a, b Field) int { return compareUTF16(a.Key, b.Key) })
	n := len(body)
	for _, f := range fs {
		n += len(f.Value)
	}
	out := make([]byte, 0, n)
	for _, f := range fs {
		out = append(out, f.Value...)
	}
	return append(out, body...)
}

// compareUTF16 orders strings by UTF-16 code units, like Java's
// String.compareTo. It differs from byte order only between supplementary
// characters (surrogates 0xD800..0xDFFF) and BMP characters above 0xDFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16First(ra), utf16First(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			// Same high surrogate: the low surrogates decide.
			return int(ra) - int(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func utf16First(r rune) rune {
	if r >= 0x10000 {
		return 0xd800 + (r-0x10000)>>10
	}
	return r
}
