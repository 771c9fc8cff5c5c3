package acl

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// sample is the shape of the plain_acl.yml a Java broker ships with, with
// the YAML variations the parser must take.
const sample = `# accounts
globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
      - TopicTest=PUB
    groupPerms:
      # the group should convert to retry topic
      - groupA=DENY
      - groupB=PUB|SUB
      - groupC=SUB

  - accessKey: "rocketmq2"
    secretKey: 'it''s # secret'   # a comment after a quoted value
    whiteRemoteAddress: 192.168.1.*
    # if it is admin, it could access all resources
    admin: true
  - accessKey: AK-route
    secretKey: "SK-\u00e9\u00e8"
    defaultTopicPerm: SUB
    topicPerms: []
dataVersion:
- counter: 1
  timestamp: 1700000000000
`

func mustParse(t *testing.T, s string) *Config {
	t.Helper()
	c, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseSample(t *testing.T) {
	c := mustParse(t, sample)
	if got := strings.Join(c.GlobalWhiteAddresses, ","); got != "10.10.103.*,192.168.0.*" {
		t.Errorf("global white addresses %q", got)
	}
	if len(c.Accounts) != 3 {
		t.Fatalf("%d accounts", len(c.Accounts))
	}
	a := c.byKey["RocketMQ"]
	if a == nil || a.SecretKey != "12345678" || a.Admin || a.DefaultTopicPerm != Deny || a.DefaultGroupPerm != Sub {
		t.Fatalf("account RocketMQ %+v", a)
	}
	want := map[string]byte{"topicA": Deny, "topicB": Pub | Sub, "topicC": Sub, "TopicTest": Pub,
		"%RETRY%groupA": Deny, "%RETRY%groupB": Pub | Sub, "%RETRY%groupC": Sub}
	if len(a.Perms) != len(want) {
		t.Errorf("perms %v, want %v", a.Perms, want)
	}
	for k, v := range want {
		if a.Perms[k] != v {
			t.Errorf("perm %s = %d, want %d", k, a.Perms[k], v)
		}
	}
	b := c.byKey["rocketmq2"]
	if b == nil || b.SecretKey != "it's # secret" || !b.Admin || b.WhiteAddress != "192.168.1.*" || b.Perms != nil {
		t.Fatalf("account rocketmq2 %+v", b)
	}
	r := c.byKey["AK-route"]
	if r == nil || r.SecretKey != "SK-éè" || r.DefaultTopicPerm != Sub || r.DefaultGroupPerm != Deny {
		t.Fatalf("account AK-route %+v", r)
	}
	if s := b.String(); strings.Contains(s, "secret") {
		t.Errorf("Account.String shows the secret: %s", s)
	}
}

func TestParseVariants(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"comments only", "# nothing\n\n   # here\n"},
		{"no accounts", "globalWhiteRemoteAddresses:\naccounts:\n"},
		{"flow lists", "globalWhiteRemoteAddresses: [10.0.0.1, '10.0.0.2']\naccounts: []\n"},
		{"crlf and bom", "\ufeffaccounts:\r\n  - accessKey: abcdefg\r\n    secretKey: hijklmn\r\n"},
		{"document marker", "---\naccounts:\n- accessKey: abcdefg\n  secretKey: hijklmn\n  topicPerms:\n  - a=SUB\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse([]byte(tc.in)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	acc := "accounts:\n  - accessKey: abcdefg\n    secretKey: hijklmn\n"
	for _, tc := range []struct{ name, in, want string }{
		{"tab", "accounts:\n\t- accessKey: x\n", "line 2: tab"},
		{"bad indentation", "accounts:\n  - accessKey: abcdefg\n      secretKey: hijklmn\n", "line 3: unexpected indentation"},
		{"not a key", "accounts\n", "line 1: expected \"key: value\""},
		{"duplicate key", acc + "    secretKey: other12\n", "line 4: duplicate key \"secretKey\""},
		{"unknown account key", acc + "    adminn: true\n", "line 4: unknown account key \"adminn\""},
		{"short keys", "accounts:\n  - accessKey: abc\n    secretKey: hijklmn\n", "line 2: accessKey and secretKey must be longer than 6"},
		{"bad perm", acc + "    topicPerms:\n      - a=PUBLISH\n", "line 5: permission \"PUBLISH\" is not"},
		{"bad perm item", acc + "    groupPerms:\n      - a=SUB=PUB\n", "line 5: \"a=SUB=PUB\" is not name=PERM"},
		{"bad default perm", acc + "    defaultTopicPerm: ALL\n", "line 4: defaultTopicPerm \"ALL\""},
		{"bad admin", acc + "    admin: maybe\n", "line 4: admin must be true or false"},
		{"bad address", acc + "    whiteRemoteAddress: 10.0.0.300\n", "line 4: bad address"},
		{"bad global address", "globalWhiteRemoteAddresses:\n  - 10.0.*.x\n", "line 2: bad address range"},
		{"repeated access key", acc + "  - accessKey: abcdefg\n    secretKey: other12\n", "line 4: access key \"abcdefg\" appears twice"},
		{"unterminated quote", acc + "    whiteRemoteAddress: \"10.0.0.1\n", "line 4: unterminated \" quote"},
		{"anchor", acc + "    admin: &x true\n", "line 4: unsupported YAML"},
		{"perms not a list", acc + "    topicPerms: a=SUB\n", "line 4: topicPerms must be a list"},
		{"accounts not a list", "accounts: x\n", "line 1: accounts must be a list"},
		{"top is a list", "- a\n", "line 1: expected a map"},
		{"two documents", "a: b\n---\nc: d\n", "line 2: more than one document"},
		{"too large", "a: " + strings.Repeat("x", maxFileSize) + "\n", "larger than"},
		{"too deep", strings.Repeat("- ", 40) + "x\n", "nested deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "rocketmq: acl file: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line with the rocketmq prefix", err)
			}
		})
	}
	// No error quotes a secret, even a malformed one.
	_, err := Parse([]byte("accounts:\n  - accessKey: abcdefg\n    secretKey: \"s3cr\\qet\"\n"))
	if err == nil || strings.Contains(err.Error(), "s3cr") {
		t.Errorf("error %v", err)
	}
	_, err = Parse([]byte("accounts:\n  - accessKey: abcdefg\n    secretKey: *s3cret\n"))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v", err)
	}
}

func TestAddrMatcher(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		yes, no []string
	}{
		{"", nil, []string{"127.0.0.1"}},
		{"*", []string{"127.0.0.1", "::1"}, nil},
		{"*.*.*.*", []string{"10.1.2.3"}, nil},
		{"127.0.0.1", []string{"127.0.0.1", "::ffff:127.0.0.1"}, []string{"127.0.0.2"}},
		{"10.1.1.1,10.1.1.2", []string{"10.1.1.2"}, []string{"10.1.1.3"}},
		{"10.1.1.{1,5}", []string{"10.1.1.5"}, []string{"10.1.1.2"}},
		{"10.1.*", []string{"10.1.200.3"}, []string{"10.2.0.1"}},
		{"10.1.1.1-100", []string{"10.1.1.100", "10.1.1.1"}, []string{"10.1.1.101", "10.1.2.1"}},
		{"::1", []string{"::1"}, []string{"127.0.0.1"}},
	} {
		m, err := parseAddrMatcher(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		for _, a := range tc.yes {
			if !m.match(netip.MustParseAddr(a)) {
				t.Errorf("%q does not match %s", tc.pattern, a)
			}
		}
		for _, a := range tc.no {
			if m.match(netip.MustParseAddr(a)) {
				t.Errorf("%q matches %s", tc.pattern, a)
			}
		}
	}
}

var loopback = netip.MustParseAddr("127.0.0.1")

func signed(code int32, ext remoting.ExtFields, body []byte, ak, sk string) *Request {
	cmd := &remoting.Command{Code: code, Ext: ext.Clone(), Body: body}
	remoting.SignACL(cmd, remoting.ACLCredentials{AccessKey: ak, SecretKey: sk})
	res, err := Resources(code, cmd.Ext, body)
	if err != nil {
		panic(err)
	}
	return &Request{Code: code, RemoteAddr: loopback, Ext: cmd.Ext, Body: body, Resources: res}
}

func ext(kv ...string) remoting.ExtFields {
	var e remoting.ExtFields
	for i := 0; i < len(kv); i += 2 {
		e.Add(kv[i], kv[i+1])
	}
	return e
}

func TestCheck(t *testing.T) {
	c := mustParse(t, sample+`
`)
	// An admin account without perms and an admin with perms.
	c2 := mustParse(t, `accounts:
  - accessKey: admin01
    secretKey: adminsecret
    admin: true
  - accessKey: admin02
    secretKey: adminsecret
    admin: true
    topicPerms:
      - onlyThis=PUB
  - accessKey: RocketMQ
    secretKey: "12345678"
    whiteRemoteAddress: 127.0.0.1
`)
	hb := []byte(`{"clientID":"c1","consumerDataSet":[{"groupName":"groupC","subscriptionDataSet":[{"topic":"topicC","subString":"*"}]}],"producerDataSet":[]}`)
	hbDenied := []byte(`{"clientID":"c1","consumerDataSet":[{"groupName":"groupC","subscriptionDataSet":[{"topic":"topicA","subString":"*"}]}],"producerDataSet":[]}`)
	for _, tc := range []struct {
		name string
		c    *Config
		req  *Request
		want string // "" allowed, else Java's message
	}{
		{"send allowed", c, signed(remoting.SendMessageV2, ext("a", "PG", "b", "topicB"), []byte("x"), "RocketMQ", "12345678"), ""},
		{"send PUB only topic", c, signed(remoting.SendMessageV2, ext("a", "PG", "b", "TopicTest"), nil, "RocketMQ", "12345678"), ""},
		{"send SUB only topic", c, signed(remoting.SendMessageV2, ext("a", "PG", "b", "topicC"), nil, "RocketMQ", "12345678"), "No default permission for topic=topicC"},
		{"send denied topic", c, signed(remoting.SendMessage, ext("topic", "topicA"), nil, "RocketMQ", "12345678"), "No default permission for topic=topicA"},
		{"send default DENY", c, signed(remoting.SendMessage, ext("topic", "other"), nil, "RocketMQ", "12345678"), "No default permission for topic=other"},
		{"send to retry topic needs the group", c, signed(remoting.SendMessageV2, ext("a", "groupA", "b", "%RETRY%groupA"), nil, "RocketMQ", "12345678"), "No default permission for group=groupA"},
		{"send to retry topic, group SUB", c, signed(remoting.SendMessageV2, ext("a", "groupC", "b", "%RETRY%groupC"), nil, "RocketMQ", "12345678"), ""},
		{"v1 send to retry topic reads group", c, signed(remoting.SendMessage, ext("producerGroup", "groupC", "topic", "%RETRY%groupC"), nil, "RocketMQ", "12345678"), ""},
		{"pull allowed", c, signed(remoting.PullMessage, ext("consumerGroup", "groupC", "topic", "topicC"), nil, "RocketMQ", "12345678"), ""},
		{"pull denied group", c, signed(remoting.PullMessage, ext("consumerGroup", "groupA", "topic", "topicC"), nil, "RocketMQ", "12345678"), "No default permission for group=groupA"},
		{"pull PUB only topic", c, signed(remoting.PullMessage, ext("consumerGroup", "groupC", "topic", "TopicTest"), nil, "RocketMQ", "12345678"), "No default permission for topic=TopicTest"},
		{"send back", c, signed(remoting.ConsumerSendMsgBack, ext("group", "groupA"), nil, "RocketMQ", "12345678"), "No default permission for group=groupA"},
		{"update offset", c, signed(remoting.UpdateConsumerOffset, ext("consumerGroup", "groupB", "topic", "topicA"), nil, "RocketMQ", "12345678"), "No default permission for topic=topicA"},
		{"heartbeat allowed", c, signed(remoting.HeartBeat, nil, hb, "RocketMQ", "12345678"), ""},
		{"heartbeat denied topic", c, signed(remoting.HeartBeat, nil, hbDenied, "RocketMQ", "12345678"), "No default permission for topic=topicA"},
		{"unregister default group SUB", c, signed(remoting.UnregisterClient, ext("clientID", "c1", "consumerGroup", "other"), nil, "RocketMQ", "12345678"), ""},
		{"admin code, not admin", c, signed(remoting.UpdateAndCreateTopic, ext("topic", "topicB"), nil, "RocketMQ", "12345678"), "Need admin permission for request code=17, but accessKey=RocketMQ is not"},
		{"delete group, not admin", c, signed(remoting.DeleteSubscriptionGroup, ext("groupName", "g"), nil, "RocketMQ", "12345678"), "Need admin permission for request code=207, but accessKey=RocketMQ is not"},
		{"admin code, admin", c2, signed(remoting.UpdateAndCreateTopic, ext("topic", "x"), nil, "admin01", "adminsecret"), ""},
		{"admin without perms has all", c2, signed(remoting.PullMessage, ext("consumerGroup", "g", "topic", "t"), nil, "admin01", "adminsecret"), ""},
		{"admin with perms is checked", c2, signed(remoting.SendMessage, ext("topic", "t"), nil, "admin02", "adminsecret"), "No default permission for topic=t"},
		{"admin with perms, listed", c2, signed(remoting.SendMessage, ext("topic", "onlyThis"), nil, "admin02", "adminsecret"), ""},
		{"query needs no perm unless listed", c, signed(remoting.GetAllTopicConfig, nil, nil, "RocketMQ", "12345678"), ""},
		{"wrong secret", c, signed(remoting.SendMessage, ext("topic", "topicB"), nil, "RocketMQ", "wrongone"), "Check signature failed for accessKey=RocketMQ"},
		{"unknown key", c, signed(remoting.SendMessage, ext("topic", "topicB"), nil, "nobody00", "12345678"), "No acl config for nobody00"},
		{"no key", c, &Request{Code: remoting.SendMessage, RemoteAddr: loopback, Ext: ext("topic", "topicB")}, "No accessKey is configured"},
		{"no signature", c, &Request{Code: remoting.SendMessage, RemoteAddr: loopback, Ext: ext("topic", "topicB", "AccessKey", "RocketMQ")}, "Check signature failed for accessKey=RocketMQ"},
		{"trace topic publish skips perms", c, signed(remoting.SendMessage, ext("topic", "RMQ_SYS_TRACE_TOPIC"), nil, "RocketMQ", "12345678"), ""},
		{"account white address skips the signature", c2, &Request{Code: remoting.SendMessage, RemoteAddr: loopback, Ext: ext("topic", "x", "AccessKey", "RocketMQ")}, ""},
		{"global white address", c, &Request{Code: remoting.UpdateAndCreateTopic, RemoteAddr: netip.MustParseAddr("192.168.0.7")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Check(tc.req)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var de *DeniedError
			if !errors.As(err, &de) || !errors.Is(err, ErrDenied) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if de.Msg != tc.want {
				t.Fatalf("message %q, want %q", de.Msg, tc.want)
			}
			if de.Remark() != "org.apache.rocketmq.acl.common.AclException: "+tc.want {
				t.Errorf("remark %q", de.Remark())
			}
		})
	}
}

// TestJavaVectors checks the frames a Java 4.9.8 client signed against an
// account with the vector's keys: accepted exactly where Java's broker
// side (PlainAccessValidator.parse) found the signature matching.
func TestJavaVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name           string `json:"name"`
			AccessKey      string `json:"accessKey"`
			SecretKey      string `json:"secretKey"`
			Serializations map[string]struct {
				Wire struct {
					File string `json:"file"`
				} `json:"wire"`
				BrokerParse struct {
					SignatureMatches bool `json:"signatureMatches"`
				} `json:"brokerParse"`
			} `json:"serializations"`
		} `json:"cases"`
	}
	testutil.LoadJavaVectors(t, "../../testdata", "acl", &v)
	checked, refused := 0, 0
	for _, tc := range v.Cases {
		for ser, s := range tc.Serializations {
			t.Run(tc.Name+"/"+ser, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join("../../testdata", s.Wire.File))
				if err != nil {
					t.Fatal(err)
				}
				cmd, _, err := remoting.DecodeFrame(raw, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				yml := "accounts:\n  - accessKey: " + tc.AccessKey + "\n    secretKey: \"" + tc.SecretKey + "\"\n    admin: true\n"
				c := mustParse(t, yml)
				res, err := Resources(cmd.Code, cmd.Ext, cmd.Body)
				if err != nil {
					t.Fatal(err)
				}
				err = c.Check(&Request{Code: cmd.Code, RemoteAddr: loopback, Ext: cmd.Ext, Body: cmd.Body, Resources: res})
				if s.BrokerParse.SignatureMatches != (err == nil) {
					t.Fatalf("Java's broker: signature matches %v; ours: %v", s.BrokerParse.SignatureMatches, err)
				}
				if err != nil {
					refused++
					if want := "Check signature failed for accessKey=" + tc.AccessKey; err.(*DeniedError).Msg != want {
						t.Errorf("refusal %q, want %q", err, want)
					}
				}
				checked++
				// A wrong secret is refused.
				bad := mustParse(t, strings.Replace(yml, "secretKey: \"", "secretKey: \"x", 1))
				if bad.Check(&Request{Code: cmd.Code, RemoteAddr: loopback, Ext: cmd.Ext, Body: cmd.Body, Resources: res}) == nil {
					t.Error("a wrong secret is accepted")
				}
			})
		}
	}
	if checked < 8 || refused == 0 {
		t.Fatalf("%d frames checked, %d refused", checked, refused)
	}
}

func TestCheckPermission(t *testing.T) {
	for _, tc := range []struct {
		need, own byte
		ok        bool
	}{
		{Pub, Pub, true}, {Pub, Sub, false}, {Sub, Pub | Sub, true}, {Pub, Pub | Deny, false},
		{Any, Sub, true}, {Any, Deny, false}, {Any, 0, false}, {Sub, Deny, false},
	} {
		if got := CheckPermission(tc.need, tc.own); got != tc.ok {
			t.Errorf("CheckPermission(%d, %d) = %v", tc.need, tc.own, got)
		}
	}
}
