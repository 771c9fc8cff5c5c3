package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
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
      - ACL_DENIED=DENY
    groupPerms:
      - cg_acl=SUB
      - cg_acl_denied=DENY
  - accessKey: acl-admin
    secretKey: acl-admin-SECRET
    admin: true
`

var (
	aclUser  = remoting.ACLCredentials{AccessKey: "acl-user", SecretKey: "acl-user-SECRET"}
	aclAdmin = remoting.ACLCredentials{AccessKey: "acl-admin", SecretKey: "acl-admin-SECRET"}
	aclWrong = remoting.ACLCredentials{AccessKey: "acl-user", SecretKey: "not-the-SECRET"}
)

// startACL starts a cluster with ACL on whose brokers and clients log
// into logs, and fills ACL_ALLOWED and ACL_DENIED with n messages each
// (sent by the admin account, which may publish anywhere).
func startACL(t *testing.T, logs *testlog.Buffer, n int) *env {
	t.Helper()
	e := start(t, rmqtest.WithACL(aclAccounts), rmqtest.WithLogger(logs.Logger()))
	if e.cluster == nil {
		t.Skip("needs the in-process broker's ACL accounts (" + envExternal + " is set)")
	}
	p, err := producer.New(producer.WithGroup("pg_acl"), producer.WithNameServers(e.ns), producer.WithACL(aclAdmin), producer.WithLogger(logs.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	send(t, p, "ACL_ALLOWED", n)
	send(t, p, "ACL_DENIED", n)
	return e
}

func noSecretLogged(t *testing.T, logs *testlog.Buffer) {
	t.Helper()
	if s := logs.String(); strings.Contains(s, "SECRET") {
		t.Errorf("a secret key is logged:\n%s", s)
	}
}

// TestACLPushConsumer: a push consumer with the right credentials and
// group consumes; with a denied group or a wrong secret the broker
// refuses its heartbeats and pulls, and nothing reaches the handler.
func TestACLPushConsumer(t *testing.T) {
	var logs testlog.Buffer
	e := startACL(t, &logs, 5)
	var got atomic.Int64
	h := func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		got.Add(int64(len(msgs)))
		return consumer.Success, nil
	}
	e.startConsumer(t, "cg_acl", "ACL_ALLOWED", consumer.All, h, consumer.WithACL(aclUser), consumer.WithLogger(logs.Logger()),
		consumer.WithConsumeFrom(consumer.FromFirst))
	// rmqtest.WaitConsumed does not sign, so count in the handler.
	testutil.WaitFor(t, wait, "5 messages handled", func() bool { return got.Load() >= 5 })

	for _, tc := range []struct {
		name, group, topic string
		cred               remoting.ACLCredentials
		refusal            string
	}{
		{"denied group", "cg_acl_denied", "ACL_ALLOWED", aclUser, "No default permission for group=cg_acl_denied"},
		{"denied topic", "cg_acl", "ACL_DENIED", aclUser, "No default permission for topic=ACL_DENIED"},
		{"wrong secret", "cg_acl", "ACL_ALLOWED", aclWrong, "Check signature failed for accessKey=acl-user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var handled atomic.Int64
			h := func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
				handled.Add(int64(len(msgs)))
				return consumer.Success, nil
			}
			var clog testlog.Buffer
			c := e.startConsumer(t, tc.group, tc.topic, consumer.All, h, consumer.WithACL(tc.cred),
				consumer.WithLogger(clog.Logger()), consumer.WithConsumeFrom(consumer.FromFirst))
			// The client hears the refusal (heartbeat or pull) with Java's text.
			testutil.WaitFor(t, wait, "the client to log the broker's refusal", func() bool {
				return clog.Count(tc.refusal) > 0
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if n := handled.Load(); n != 0 {
				t.Fatalf("handled %d messages despite the refusal", n)
			}
			noSecretLogged(t, &clog)
		})
	}
	noSecretLogged(t, &logs)
}

// TestACLPullConsumer: the lite pull consumer polls with the right
// credentials and polls nothing where the broker refuses its pulls.
func TestACLPullConsumer(t *testing.T) {
	var logs testlog.Buffer
	e := startACL(t, &logs, 4)
	c := e.newPull(t, "cg_acl", consumer.WithACL(aclUser), consumer.WithLogger(logs.Logger()),
		consumer.WithConsumeFrom(consumer.FromFirst))
	if err := c.Subscribe("ACL_ALLOWED", consumer.All); err != nil {
		t.Fatal(err)
	}
	startPull(t, c)
	if got := pollN(t, c, 4); len(got) != 4 {
		t.Fatalf("polled %d messages, want 4", len(got))
	}

	for _, tc := range []struct {
		name, group, topic string
		cred               remoting.ACLCredentials
		refusal            string
	}{
		{"denied topic", "cg_acl", "ACL_DENIED", aclUser, "No default permission for topic=ACL_DENIED"},
		{"denied group", "cg_acl_denied", "ACL_ALLOWED", aclUser, "No default permission for group=cg_acl_denied"},
		{"wrong secret", "cg_acl", "ACL_ALLOWED", aclWrong, "Check signature failed for accessKey=acl-user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clog testlog.Buffer
			c := e.newPull(t, tc.group, consumer.WithACL(tc.cred), consumer.WithLogger(clog.Logger()),
				consumer.WithConsumeFrom(consumer.FromFirst))
			// Assigned queues: no rebalance needed, so the refusal is the
			// pull's own.
			qs := queuesOf(tc.topic, e.broker, 4)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			if err := c.Assign(ctx, qs); err != nil {
				t.Fatal(err)
			}
			startPull(t, c)
			testutil.WaitFor(t, wait, "the client to log the broker's refusal", func() bool {
				return clog.Count(tc.refusal) > 0
			})
			pollNone(t, c, 200*time.Millisecond)
			noSecretLogged(t, &clog)
		})
	}
	noSecretLogged(t, &logs)
}
