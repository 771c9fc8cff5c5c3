package acl

import (
	"net/netip"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// FuzzParseACL feeds arbitrary files to Parse: it must return, never
// panic, and a parsed Config must answer Check.
func FuzzParseACL(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("accounts:\n- accessKey: abcdefg\n  secretKey: 'a''b'\n  topicPerms: [a=SUB, \"b=PUB\"]\n"))
	f.Add([]byte("a:\n  - - - x\n  - y: z\n    w:\n"))
	f.Add([]byte("globalWhiteRemoteAddresses: [10.1.1.{1,2}, 10.*.1-3]\n"))
	f.Add([]byte("\"k\": \"v\\u00e9\" # c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		r := &Request{Code: remoting.SendMessage, RemoteAddr: netip.MustParseAddr("10.1.1.2"),
			Ext:       remoting.ExtFields{{Key: "AccessKey", Value: "abcdefg"}, {Key: "topic", Value: "a"}},
			Resources: []Resource{{"a", Pub}, {"%RETRY%g", Sub}}}
		_ = c.Check(r)
		for _, a := range c.Accounts {
			if len(a.AccessKey) <= minKeyLength || len(a.SecretKey) <= minKeyLength {
				t.Fatalf("account with short keys accepted: %q", a.AccessKey)
			}
		}
	})
}
