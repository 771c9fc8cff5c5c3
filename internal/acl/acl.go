// Package acl is the server side of RocketMQ's plain ACL
// (docs/PROTOCOL.md §8.13 and §9.17): accounts read from a
// plain_acl.yml file and the checks of Java's PlainAccessValidator and
// PlainPermissionManager.
package acl

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Permission bits, as Java's Permission.
const (
	Deny byte = 1
	Any  byte = 1 << 1
	Pub  byte = 1 << 2
	Sub  byte = 1 << 3
)

// RetryGroupTopicPrefix marks a group in a resource map, as Java keeps
// groups as their retry topics.
const RetryGroupTopicPrefix = "%RETRY%"

// traceTopic is Java's TopicValidator.RMQ_SYS_TRACE_TOPIC: publishing
// traces to it skips the permission check.
const traceTopic = "RMQ_SYS_TRACE_TOPIC"

// JavaException is the class whose toString starts the remark of a Java
// broker's ACL refusal.
const JavaException = "org.apache.rocketmq.acl.common.AclException"

// ErrDenied is wrapped by every refusal of Check.
var ErrDenied = errors.New("rocketmq: acl: access denied")

// DeniedError is a refusal; Msg is the text of Java's AclException.
type DeniedError struct{ Msg string }

func (e *DeniedError) Error() string { return "rocketmq: acl: " + e.Msg }
func (e *DeniedError) Unwrap() error { return ErrDenied }

// Remark is the remark a 4.9.8 broker answers with (SYSTEM_ERROR and
// RemotingHelper.exceptionSimpleDesc, without the stack frame).
func (e *DeniedError) Remark() string { return JavaException + ": " + e.Msg }

func denied(format string, args ...any) error {
	return &DeniedError{Msg: fmt.Sprintf(format, args...)}
}

// Account is one entry of accounts.
type Account struct {
	AccessKey        string
	SecretKey        string
	WhiteAddress     string
	Admin            bool
	DefaultTopicPerm byte
	DefaultGroupPerm byte
	// Perms maps topics, and groups as %RETRY%group, to permissions; nil
	// when the account lists none (an admin without any then has all).
	Perms map[string]byte

	white addrMatcher
}

// String never shows the secret key.
func (a *Account) String() string { return "acl account " + a.AccessKey }

// Config is a parsed accounts file.
type Config struct {
	GlobalWhiteAddresses []string
	Accounts             []*Account

	global []addrMatcher
	byKey  map[string]*Account
}

// Resource is what a request needs: a permission on each topic or
// %RETRY%group, in the order Java's parse adds them.
type Resource struct {
	Name string
	Perm byte
}

// Request is what Check looks at.
type Request struct {
	Code       int32
	RemoteAddr netip.Addr
	Ext        remoting.ExtFields
	Body       []byte
	// Resources are the permissions the request needs (see Resources).
	Resources []Resource
}

// Check validates a request as Java's PlainPermissionManager.validate
// does: a global white address passes; otherwise the access key must name
// an account; an account's white address passes; otherwise the signature
// must match, then (unless publishing traces) admin-only codes need an
// admin and each resource its permission. The error is a *DeniedError.
func (c *Config) Check(r *Request) error {
	for i := range c.global {
		if c.global[i].match(r.RemoteAddr) {
			return nil
		}
	}
	ak, ok := r.Ext.Get(remoting.ACLAccessKey)
	if !ok {
		return denied("No accessKey is configured")
	}
	acc := c.byKey[ak]
	if acc == nil {
		return denied("No acl config for %s", ak)
	}
	if acc.white.match(r.RemoteAddr) {
		return nil
	}
	sig, _ := r.Ext.Get(remoting.ACLSignature)
	want := remoting.ACLSignatureOf(r.Ext, r.Body, acc.SecretKey)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return denied("Check signature failed for accessKey=%s", ak)
	}
	need := dedupResources(r.Resources)
	for _, res := range need {
		if res.Name == traceTopic && res.Perm == Pub {
			return nil
		}
	}
	return acc.checkPerm(r.Code, need)
}

// dedupResources keeps the last permission of a name, as Java's HashMap.
func dedupResources(rs []Resource) []Resource {
	if len(rs) < 2 {
		return rs
	}
	out := make([]Resource, 0, len(rs))
	at := make(map[string]int, len(rs))
	for _, r := range rs {
		if i, ok := at[r.Name]; ok {
			out[i].Perm = r.Perm
			continue
		}
		at[r.Name] = len(out)
		out = append(out, r)
	}
	return out
}

// checkPerm is Java's PlainPermissionManager.checkPerm.
func (a *Account) checkPerm(code int32, need []Resource) error {
	if AdminCode(code) && !a.Admin {
		return denied("Need admin permission for request code=%d, but accessKey=%s is not", code, a.AccessKey)
	}
	if len(need) == 0 || (a.Perms == nil && a.Admin) {
		return nil
	}
	for _, res := range need {
		group := strings.HasPrefix(res.Name, RetryGroupTopicPrefix)
		owned, ok := a.Perms[res.Name]
		if !ok {
			owned = a.DefaultTopicPerm
			if group {
				owned = a.DefaultGroupPerm
			}
		}
		if !CheckPermission(res.Perm, owned) {
			if group {
				return denied("No default permission for group=%s", strings.TrimPrefix(res.Name, RetryGroupTopicPrefix))
			}
			return denied("No default permission for topic=%s", res.Name)
		}
	}
	return nil
}

// CheckPermission is Java's Permission.checkPermission.
func CheckPermission(needed, owned byte) bool {
	if owned&Deny != 0 {
		return false
	}
	if needed&Any != 0 {
		return owned&(Pub|Sub) != 0
	}
	return needed&owned != 0
}

// AdminCode reports the request codes only admins may send (Java's
// Permission.ADMIN_CODE).
func AdminCode(code int32) bool {
	switch code {
	case remoting.UpdateAndCreateTopic, remoting.UpdateBrokerConfig, remoting.DeleteTopicInBroker,
		remoting.UpdateAndCreateSubscriptionGroup, remoting.DeleteSubscriptionGroup:
		return true
	}
	return false
}

// RetryTopic is Java's PlainAccessResource.getRetryTopic: a missing group
// becomes "null", as Java's string concatenation does.
func RetryTopic(group string, present bool) string {
	if !present {
		group = "null"
	}
	return RetryGroupTopicPrefix + group
}

// parsePerm is Java's Permission.parsePermFromString, except that an
// unknown word is an error rather than DENY.
func parsePerm(s string) (byte, bool) {
	switch strings.TrimSpace(s) {
	case "PUB":
		return Pub, true
	case "SUB":
		return Sub, true
	case "PUB|SUB", "SUB|PUB":
		return Pub | Sub, true
	case "DENY":
		return Deny, true
	}
	return Deny, false
}
