package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// aclAccounts is the brokers' plain_acl.yml in the ACL tests.
const aclAccounts = `accounts:
  - accessKey: acl-user
    secretKey: acl-user-SECRET
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
  - accessKey: acl-admin
    secretKey: acl-admin-SECRET
    admin: true
`

// TestACLAdmin: on a broker with ACL on, the admin account creates and
// deletes topics and groups; an ordinary account is refused exactly those
// requests (Java's Permission.ADMIN_CODE) but may read; a wrong secret or
// no credentials are refused everything on the broker.
func TestACLAdmin(t *testing.T) {
	var logs testlog.Buffer
	e := start(t, rmqtest.WithACL(aclAccounts), rmqtest.WithLogger(logs.Logger()))
	e.needLocal(t, "the broker's ACL accounts")
	newAdmin := func(cred remoting.ACLCredentials) *admin.Admin {
		a, err := admin.New(admin.WithNameServers(e.ns), admin.WithACL(cred), admin.WithLogger(logs.Logger()))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close(context.Background()) })
		return a
	}
	root := newAdmin(remoting.ACLCredentials{AccessKey: "acl-admin", SecretKey: "acl-admin-SECRET"})
	user := newAdmin(remoting.ACLCredentials{AccessKey: "acl-user", SecretKey: "acl-user-SECRET"})
	wrong := newAdmin(remoting.ACLCredentials{AccessKey: "acl-user", SecretKey: "not-the-SECRET"})
	ctx := ctxT(t)
	topic, group := name(t, "ACLT"), name(t, "aclg")

	refused := func(what string, err error, want string) {
		t.Helper()
		if !errors.Is(err, remoting.ErrACL) {
			t.Errorf("%s: %v, want an ACL refusal", what, err)
			return
		}
		if !strings.Contains(err.Error(), "org.apache.rocketmq.acl.common.AclException: "+want) {
			t.Errorf("%s: %q, want %q", what, err, want)
		}
	}

	// The ordinary account may not administer.
	refused("user creates a topic", user.CreateTopic(ctx, e.brokerAddr, admin.TopicConfig{Name: topic, ReadQueues: 2, WriteQueues: 2}),
		"Need admin permission for request code=17, but accessKey=acl-user is not")
	refused("user creates a group", user.CreateGroup(ctx, e.brokerAddr, admin.NewGroupConfig(group)),
		"Need admin permission for request code=200, but accessKey=acl-user is not")

	// The admin account may.
	if err := root.CreateTopic(ctx, e.brokerAddr, admin.TopicConfig{Name: topic, ReadQueues: 2, WriteQueues: 2}); err != nil {
		t.Fatalf("admin creates a topic: %v", err)
	}
	if err := root.CreateGroup(ctx, e.brokerAddr, admin.NewGroupConfig(group)); err != nil {
		t.Fatalf("admin creates a group: %v", err)
	}

	refused("user deletes a group", user.DeleteGroup(ctx, e.brokerAddr, group, false),
		"Need admin permission for request code=207, but accessKey=acl-user is not")
	refused("user deletes a topic", user.DeleteTopic(ctx, e.cluster, topic),
		"Need admin permission for request code=215, but accessKey=acl-user is not")

	// Reading needs only a valid signature.
	if _, err := user.BrokerRuntimeInfo(ctx, e.brokerAddr); err != nil {
		t.Errorf("user reads the runtime info: %v", err)
	}
	if _, err := user.TopicStats(ctx, topic); err != nil {
		t.Errorf("user reads topic stats: %v", err)
	}
	_, err := wrong.BrokerRuntimeInfo(ctx, e.brokerAddr)
	refused("wrong secret reads", err, "Check signature failed for accessKey=acl-user")
	_, err = e.adm.BrokerRuntimeInfo(ctx, e.brokerAddr)
	refused("no credentials read", err, "No accessKey is configured")

	if err := root.DeleteGroup(ctx, e.brokerAddr, group, false); err != nil {
		t.Errorf("admin deletes the group: %v", err)
	}
	if err := root.DeleteTopic(ctx, e.cluster, topic); err != nil {
		t.Errorf("admin deletes the topic: %v", err)
	}
	if s := logs.String(); strings.Contains(s, "SECRET") {
		t.Errorf("a secret key is logged:\n%s", s)
	}
}
