package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// aclAccounts is our broker's plain_acl.yml in TestOfficialClientACL.
const aclAccounts = `accounts:
  - accessKey: acl-user
    secretKey: acl-user-SECRET
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms:
      - ACL_ALLOWED=PUB|SUB
      - ACL_DENIED=SUB
    groupPerms:
      - CG_ACL=SUB
  - accessKey: acl-admin
    secretKey: acl-admin-SECRET
    admin: true
`

// TestOfficialClientACL: the official Go client with credentials
// (primitive.Credentials, its AclClientRPCHook) against our broker with
// ACL on. Its signatures verify: it sends to and consumes an allowed
// topic; a topic without PUB and a wrong secret are refused with Java's
// AclException text.
func TestOfficialClientACL(t *testing.T) {
	var logs testlog.Buffer
	e := newEnv(t, 1, rmqtest.WithACL(aclAccounts), rmqtest.WithLogger(logs.Logger()))
	if e.cluster == nil {
		t.Skip("needs the in-process broker's ACL accounts (" + envExternal + " is set)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Topics are created by our admin client with the admin account.
	adm, err := admin.New(admin.WithNameServers(e.ns), admin.WithACL(remoting.ACLCredentials{AccessKey: "acl-admin", SecretKey: "acl-admin-SECRET"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer adm.Close(context.Background())
	for _, topic := range []string{"ACL_ALLOWED", "ACL_DENIED"} {
		for _, addr := range e.masters(t) {
			if err := adm.CreateTopic(ctx, addr, admin.TopicConfig{Name: topic, ReadQueues: 4, WriteQueues: 4}); err != nil {
				t.Fatal(err)
			}
		}
		testutil.WaitFor(t, 20*time.Second, "the route of "+topic, func() bool {
			r, err := adm.TopicRoute(ctx, topic)
			return err == nil && len(r.QueueDatas) > 0
		})
	}

	user := primitive.Credentials{AccessKey: "acl-user", SecretKey: "acl-user-SECRET"}
	p := e.officialProducer(t, producer.WithCredentials(user))
	const n = 6
	for i := range n {
		res, err := p.SendSync(ctx, primitive.NewMessage("ACL_ALLOWED", []byte("acl body")))
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("official send %d to an allowed topic: %v %v", i, res, err)
		}
	}
	_, err = p.SendSync(ctx, primitive.NewMessage("ACL_DENIED", []byte("x")))
	if err == nil || !strings.Contains(err.Error(), "No default permission for topic=ACL_DENIED") {
		t.Errorf("official send to a topic without PUB: %v, want the AclException", err)
	}
	wrong := e.officialProducer(t, producer.WithCredentials(primitive.Credentials{AccessKey: "acl-user", SecretKey: "not-the-SECRET"}))
	_, err = wrong.SendSync(ctx, primitive.NewMessage("ACL_ALLOWED", []byte("x")))
	if err == nil || !strings.Contains(err.Error(), "Check signature failed for accessKey=acl-user") {
		t.Errorf("official send with a wrong secret: %v, want the AclException", err)
	}

	// Its push consumer: heartbeats, pulls and offset commits verify.
	var s sink
	pc, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(e.resolver()),
		consumer.WithGroupName("CG_ACL"),
		consumer.WithInstance(e.name("c")),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithCredentials(user),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe("ACL_ALLOWED", consumer.MessageSelector{}, s.handler("c")); err != nil {
		t.Fatal(err)
	}
	startOfficial(t, "official consumer", pc)
	testutil.WaitFor(t, consumeTimeout, "the official consumer to receive every message", func() bool { return s.len() >= n })

	if strings.Contains(logs.String(), "SECRET") {
		t.Errorf("a secret key is in our broker's log:\n%s", logs.String())
	}
}
