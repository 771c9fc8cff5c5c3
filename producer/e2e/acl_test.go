package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// aclAccounts is the brokers' plain_acl.yml in the ACL tests.
const aclAccounts = `accounts:
  - accessKey: acl-user
    secretKey: acl-user-SECRET
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms:
      - ACL_ALLOWED=PUB|SUB
      - ACL_SUBONLY=SUB
      - ACL_DENIED=DENY
    groupPerms:
      - cg_acl=SUB
  - accessKey: acl-admin
    secretKey: acl-admin-SECRET
    admin: true
`

var (
	aclUser  = remoting.ACLCredentials{AccessKey: "acl-user", SecretKey: "acl-user-SECRET"}
	aclWrong = remoting.ACLCredentials{AccessKey: "acl-user", SecretKey: "not-the-SECRET"}
)

// TestACLSend sends with and without valid credentials to a broker with
// ACL on: allowed, denied topic, topic without PUB, wrong secret, unknown
// and missing access key. Refusals are ErrACL with Java's text, and no
// secret key reaches any log line.
func TestACLSend(t *testing.T) {
	if os.Getenv(envExternal) != "" {
		t.Skip("needs the in-process broker's ACL accounts (" + envExternal + " is set)")
	}
	var logs testlog.Buffer
	e := startE2EWith(t, 1, rmqtest.WithACL(aclAccounts), rmqtest.WithLogger(logs.Logger()))
	send := func(cred *remoting.ACLCredentials, topic string) error {
		opts := []producer.Option{producer.WithLogger(logs.Logger()), producer.WithSendTimeout(5 * time.Second)}
		if cred != nil {
			opts = append(opts, producer.WithACL(*cred))
		}
		p := e.newProducer(t, opts...)
		m, err := producer.NewMessage(topic, []byte("hello acl"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err = p.Send(ctx, m)
		return err
	}
	if err := send(&aclUser, "ACL_ALLOWED"); err != nil {
		t.Fatalf("allowed send: %v", err)
	}
	for _, tc := range []struct {
		name  string
		cred  *remoting.ACLCredentials
		topic string
		want  string
	}{
		{"denied topic", &aclUser, "ACL_DENIED", "No default permission for topic=ACL_DENIED"},
		{"topic without PUB", &aclUser, "ACL_SUBONLY", "No default permission for topic=ACL_SUBONLY"},
		{"topic not listed", &aclUser, "ACL_OTHER", "No default permission for topic=ACL_OTHER"},
		{"wrong secret", &aclWrong, "ACL_ALLOWED", "Check signature failed for accessKey=acl-user"},
		{"unknown access key", &remoting.ACLCredentials{AccessKey: "nobody-here", SecretKey: "whatever"}, "ACL_ALLOWED", "No acl config for nobody-here"},
		{"no credentials", nil, "ACL_ALLOWED", "No accessKey is configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := send(tc.cred, tc.topic)
			if !errors.Is(err, remoting.ErrACL) || !errors.Is(err, remoting.ErrSystemError) {
				t.Fatalf("error %v, want an ACL refusal", err)
			}
			if !strings.Contains(err.Error(), "org.apache.rocketmq.acl.common.AclException: "+tc.want) {
				t.Fatalf("error %q, want %q", err, tc.want)
			}
		})
	}
	if s := logs.String(); strings.Contains(s, "SECRET") {
		t.Errorf("a secret key is logged:\n%s", s)
	}
	if logs.Count("acl: request refused") == 0 {
		t.Error("the broker logged no refusal: the capture sees nothing")
	}
}

// TestACLReload: the broker picks up a changed accounts file while
// running, and keeps the accounts in force when the file turns invalid.
func TestACLReload(t *testing.T) {
	if os.Getenv(envExternal) != "" {
		t.Skip("needs the in-process broker's ACL accounts (" + envExternal + " is set)")
	}
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	accounts := func(perm string) string {
		return "accounts:\n  - accessKey: acl-user\n    secretKey: acl-user-SECRET\n    topicPerms:\n      - ACL_RELOAD=" + perm + "\n"
	}
	write(accounts("SUB"))
	var logs testlog.Buffer
	e := startE2EWith(t, 1, rmqtest.WithACLFile(path), rmqtest.WithACLReloadInterval(20*time.Millisecond), rmqtest.WithLogger(logs.Logger()))
	p := e.newProducer(t, producer.WithACL(aclUser), producer.WithSendTimeout(5*time.Second))
	send := func() error {
		m, err := producer.NewMessage("ACL_RELOAD", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = p.Send(ctx, m)
		return err
	}
	if err := send(); !errors.Is(err, remoting.ErrACL) {
		t.Fatalf("send before the change: %v, want an ACL refusal", err)
	}
	write(accounts("PUB"))
	testutil.WaitFor(t, 20*time.Second, "the changed accounts to allow the send", func() bool { return send() == nil })
	write(accounts("PUB") + "    admin: sometimes\n")
	testutil.WaitFor(t, 20*time.Second, "the invalid file to be logged", func() bool { return logs.Count("invalid accounts file") > 0 })
	if err := send(); err != nil {
		t.Fatalf("send after an invalid file: %v", err)
	}
}
