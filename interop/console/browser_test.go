package console

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/console"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

const (
	// envExternal points the test at an external cluster instead of rmqtest.
	envExternal = "ROCKETMQ_NAMESRV"
	// envScreenshots names a directory that receives a PNG of each page.
	envScreenshots = "CONSOLE_SCREENSHOTS"

	// stepTimeout bounds one navigation, form submission or element query.
	stepTimeout = 20 * time.Second
	// liveTimeout bounds waiting for the page's own 2 s polling to show a
	// change: the broker's state must change first (offsets are committed
	// every half second here) and then one or two polls must pass.
	liveTimeout = 40 * time.Second
)

// chromium returns the browser's path, or "" when it is not installed.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestConsoleInBrowser drives the console in headless Chromium: it creates
// a topic and a group through the forms, sends a message from the topic's
// page, watches the group's lag rise and fall on the group page without a
// reload, edits the group's settings, finds a message by key and views it
// and its trace, resets the group's offset and skips its accumulated
// messages after a confirmation, resends and exports dead letters, reads
// the dashboard, switches to Chinese, and signs in to a console with login.
func TestConsoleInBrowser(t *testing.T) {
	exe := chromium()
	if exe == "" {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it): the console's browser test needs it")
	}
	ns := os.Getenv(envExternal)
	// Traces need the broker's trace topic: rmqtest creates it; an external
	// cluster must have traceTopicEnable and says so with ROCKETMQ_TRACE=1.
	traced := ns == "" || os.Getenv("ROCKETMQ_TRACE") == "1"
	if ns == "" {
		ns = rmqtest.StartCluster(t, rmqtest.WithTraceTopic("")).NameServerAddr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	adm, err := admin.New(admin.WithNameServers(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close(context.Background()) })
	// Names stay unique across runs against an external cluster.
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	sender := startProducer(t, ctx, ns, "ConsoleBrowserConsole_"+suffix, false)
	h, err := console.New(console.Config{Admin: adm, Producer: sender, Title: "go-rocketmq", DashboardSample: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	ci, err := adm.ClusterInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cluster, masters := "", 0
	for name, brokers := range ci.ClusterAddrTable {
		if cluster == "" || name < cluster {
			cluster, masters = name, len(brokers)
		}
	}
	if cluster == "" {
		t.Fatal("the NameServer knows no cluster")
	}

	b := newBrowser(t, exe, srv.URL)

	topic := "ConsoleBrowser_" + suffix
	group := "ConsoleBrowserGroup_" + suffix
	producerGroup := "ConsoleBrowserProducer_" + suffix
	const queues = 4

	// A form whose csrf field does not match the cookie is refused, and
	// nothing is created.
	b.open("/topics")
	forged := topic + "_forged"
	b.set("#create-topic [name=topic]", forged)
	b.set("#create-topic [name=csrf]", "forged")
	if resp := b.submit("create-topic-submit"); resp.Status != http.StatusForbidden {
		t.Fatalf("create topic with a forged csrf field: status %d, want 403", resp.Status)
	}
	if _, err := adm.TopicRoute(ctx, forged); err == nil {
		t.Fatalf("topic %s exists after a create with a forged csrf field", forged)
	}

	// Create the topic through the form.
	b.open("/topics")
	b.set("#create-topic [name=topic]", topic)
	b.set("#create-topic [name=cluster]", cluster)
	b.set("#create-topic [name=queues]", strconv.Itoa(queues))
	resp := b.submit("create-topic-submit")
	if want := "/topics/" + topic; resp.Status != http.StatusOK || pathOf(t, resp.URL) != want {
		t.Fatalf("create topic: landed on %s (status %d), want %s", resp.URL, resp.Status, want)
	}
	b.noError()
	b.waitCount("#queues tbody tr[data-queue]", queues*masters)
	b.waitText("#topic-name", topic)
	b.open("/topics?q=" + url.QueryEscape(topic))
	b.waitCount(`#topics tr[data-topic="`+topic+`"]`, 1)
	// The kind tabs: the new topic is a normal one, not a system one.
	if resp := b.follow(`#kinds a[data-kind="normal"]`); resp.Status != http.StatusOK {
		t.Fatalf("normal topics tab: status %d", resp.Status)
	}
	b.waitCount(`#topics tr[data-topic="`+topic+`"] .kind`, 1)
	b.waitText(`#topics tr[data-topic="`+topic+`"] .kind`, "normal")
	b.open("/topics?kind=system")
	b.waitCount(`#topics tr[data-topic="`+topic+`"]`, 0)
	b.waitAtLeast(`#topics tbody tr[data-topic]`, 1)
	b.waitAtLeast(`#kinds a`, 5)
	b.shot("topics")

	// An unknown group is a 404 with the error banner and no forms.
	b.openStatus("/groups/NoSuchGroup_"+suffix, http.StatusNotFound)
	b.waitCount("#error", 1)
	b.waitCount("#delete-group, #reset-offset", 0)

	// Create the group through the form; its page shows lag 0.
	b.open("/groups")
	b.set("#create-group [name=group]", group)
	b.set("#create-group [name=cluster]", cluster)
	lagPage := "/groups/" + group
	if resp := b.submit("create-group-submit"); resp.Status != http.StatusOK || pathOf(t, resp.URL) != lagPage {
		t.Fatalf("create group: landed on %s (status %d), want %s", resp.URL, resp.Status, lagPage)
	}
	b.noError()
	b.waitText("#lag-total", "0")

	p := startProducer(t, ctx, ns, producerGroup, traced)
	// The reset goes back to before the first message.
	resetTo := time.Now().Add(-time.Second)
	const first, second = 8, 12
	findKey := "console-find-" + suffix
	findBody := []byte(`{"order":3,"item":"book","note":"found by key"}`)
	var findID string
	send := func(topic string, from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			key, body := fmt.Sprintf("console-%d-%s", i, suffix), []byte(fmt.Sprintf("message %d", i))
			if i == 3 {
				key, body = findKey, findBody
			}
			m, err := producer.NewMessage(topic, body, producer.Tag("TagA"), producer.Keys(key))
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Send(ctx, m)
			if err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
			if i == 3 {
				findID = res.MsgID
			}
		}
	}
	send(topic, 0, first)

	// The topic page counts the messages on its queues.
	b.open("/topics/" + topic)
	b.waitSum("#queues tbody td.max", first)

	// Send one more from the topic page's form.
	b.set("#send-message [name=tag]", "TagB")
	b.set("#send-message [name=keys]", "sent-from-page-"+suffix)
	b.set("#send-message [name=props]", "origin=browser")
	b.set("#send-message [name=body]", "hello from the console")
	if resp := b.submit("send-message-submit"); resp.Status != http.StatusOK {
		t.Fatalf("send from the topic page: status %d (%s)", resp.Status, b.where())
	}
	b.noError()
	b.waitText("#send-status", "SEND_OK")
	b.shot("topic")
	if resp := b.follow("#send-msgid a"); resp.Status != http.StatusOK {
		t.Fatalf("sent message link: status %d", resp.Status)
	}
	b.waitText("#body", "hello from the console")
	b.waitText(`#properties tr[data-name="origin"] .value`, "browser")
	const sentByPage = 1

	// A first member drains the first messages and leaves; the group has
	// committed offsets now, so its lag shows.
	var consumed atomic.Int64
	c := startConsumer(t, ctx, ns, group, topic, &consumed, traced)
	testutil.WaitFor(t, liveTimeout, "the first member commits every first message", func() bool {
		return consumed.Load() >= first+sentByPage && committedLag(ctx, adm, group, topic) == 0
	})
	stopConsumer(t, c)

	// More messages: the open group page shows the lag rise, then fall to
	// 0 while a new member drains them, with no reload; the chart has a
	// time axis and a legend.
	b.open(lagPage)
	b.markPage()
	send(topic, first, second)
	b.waitText("#lag-total", strconv.Itoa(second))
	b.checkMarked()
	c = startConsumer(t, ctx, ns, group, topic, &consumed, traced)
	b.waitText("#lag-total", "0")
	b.checkMarked()
	if n := consumed.Load(); n < first+sentByPage+second {
		t.Fatalf("the page shows lag 0 but the members consumed %d of %d messages", n, first+sentByPage+second)
	}
	b.waitAtLeast("#lag-chart svg text.x-label", 2)
	b.waitAtLeast("#lag-chart svg text.y-label", 3)
	b.waitText("#lag-chart svg .legend text", "Lag 0")

	// The reloaded group page lists the live member; its settings form
	// changes the group's retry max times.
	b.open(lagPage)
	b.waitCount("#members tbody tr[data-client]", 1)
	b.waitText("#members tr[data-client] .language", "GO")
	b.waitCount(`#group-queues tbody tr[data-queue*="`+topic+`"]`, queues*masters)
	b.set("#group-config [name=cluster]", cluster)
	b.set("#group-config [name=retryMaxTimes]", "5")
	if resp := b.submit("group-config-submit"); resp.Status != http.StatusOK || pathOf(t, resp.URL) != lagPage {
		t.Fatalf("save group settings: landed on %s (status %d)", resp.URL, resp.Status)
	}
	b.noError()
	b.waitCount(`#group-configs tbody tr[data-broker] .retry-max`, masters)
	b.waitText(`#group-configs tbody tr[data-broker] .retry-max`, "5")
	b.shot("group")
	b.open("/groups?q=" + url.QueryEscape(group))
	b.waitCount(`#groups tr[data-group="`+group+`"]`, 1)
	b.waitText(`#groups tr[data-group="`+group+`"] .lag`, "0")
	if resp := b.follow("#sort-lag"); resp.Status != http.StatusOK || !strings.Contains(resp.URL, "sort=lag") {
		t.Fatalf("sort by lag: landed on %s (status %d)", resp.URL, resp.Status)
	}
	b.waitCount(`#groups tr[data-group="`+group+`"]`, 1)
	b.shot("groups")

	// Find the message by key and open it, then its trace.
	b.open("/messages")
	b.set("#query-key [name=topic]", topic)
	b.set("#query-key [name=key]", findKey)
	if resp := b.submit("query-key-submit"); resp.Status != http.StatusOK {
		t.Fatalf("query by key: status %d", resp.Status)
	}
	b.noError()
	row := `#messages tr[data-msgid="` + findID + `"]`
	b.waitCount("#messages tbody tr[data-msgid]", 1)
	b.waitText(row+" .keys", findKey)
	b.shot("messages")
	if resp := b.follow(row + " a"); resp.Status != http.StatusOK || pathOf(t, resp.URL) != "/messages/view" {
		t.Fatalf("message link: landed on %s (status %d)", resp.URL, resp.Status)
	}
	b.noError()
	b.waitText("#msgid", findID)
	b.waitText("#body", string(findBody))
	b.waitText(`#properties tr[data-name="KEYS"] .value`, findKey)
	b.waitText(`#tracks tr[data-group="`+group+`"] .track-type`, admin.TrackConsumed.String())
	b.chooseFormat("hex")
	b.waitText("#body", strings.TrimSpace(hex.Dump(findBody)))
	b.chooseFormat("json")
	if got := b.text("#body"); !sameJSON(got, findBody) {
		t.Fatalf("body as JSON shows %q, want the JSON of %s", got, findBody)
	}
	b.shot("message")
	if traced {
		// The trace records arrive in batches; reload until both steps show.
		section := `section.trace[data-msgid="` + findID + `"]`
		testutil.WaitFor(t, liveTimeout, "the message's pub and consume traced", func() bool {
			b.open("/trace?by=id&id=" + url.QueryEscape(findID))
			return b.count(section+` tr[data-kind="Pub"]`) == 1 && b.count(section+` tr[data-kind="Consume"]`) >= 1
		})
		b.waitText(section+` tr[data-kind="Pub"] .status`, "success")
		b.waitText(section+` tr[data-kind="Consume"] .group`, group)
		b.waitAtLeast(section+` svg g.step`, 2)
		b.shot("trace")
	}

	// The producers page lists the producer.
	b.open("/producers?group=" + url.QueryEscape(producerGroup) + "&topic=" + url.QueryEscape(topic))
	b.waitCount("#producers tbody tr[data-client]", 1)
	b.waitText("#producers tr[data-client] .language", "GO")
	b.shot("producers")

	// With the member stopped, reset the group to before the first message
	// through the date-time field: the lag is every message again.
	stopConsumer(t, c)
	testutil.WaitFor(t, liveTimeout, "the group has no live member", func() bool {
		_, err := adm.ConsumerConnection(ctx, group)
		return errors.Is(err, remoting.ErrConsumerNotOnline)
	})
	all := strconv.Itoa(first + sentByPage + second)
	b.open(lagPage)
	b.set("#reset-offset [name=topic]", topic)
	b.set("#reset-offset [name=time]", resetTo.Format("2006-01-02T15:04:05"))
	if !b.eval(`document.querySelector("#reset-offset [name=force]").checked`) {
		b.click("#reset-offset [name=force]")
	}
	resp = b.submit("reset-offset-submit")
	if resp.Status != http.StatusOK || pathOf(t, resp.URL) != lagPage {
		t.Fatalf("reset offset: landed on %s (status %d), want %s", resp.URL, resp.Status, lagPage)
	}
	b.noError()
	b.waitText("#lag-total", all)

	// Skip asks first: declined, nothing changes; accepted, the lag is 0.
	b.markPage()
	b.eval(`(window.confirm = m => { window.lastConfirm = m; return false; }, true)`)
	b.click("#skip-accumulated-submit")
	if !b.eval(`String(window.lastConfirm).includes("Skip the ` + all + ` accumulated messages")`) {
		t.Fatalf("skip asked %q", b.evalString(`String(window.lastConfirm)`))
	}
	b.checkMarked()
	b.waitText("#lag-total", all)
	b.eval(`(window.confirm = () => true, true)`)
	if resp := b.submit("skip-accumulated-submit"); resp.Status != http.StatusOK || pathOf(t, resp.URL) != lagPage {
		t.Fatalf("skip: landed on %s (status %d)", resp.URL, resp.Status)
	}
	b.noError()
	b.waitText("#lag-total", "0")

	// Dead letters: a member that fails without retries sends two messages
	// of another topic to %DLQ%; one is resent from the page, and the
	// export has both.
	dlqTopic, dlqGroup := "ConsoleBrowserDLQ_"+suffix, "ConsoleBrowserDLQGroup_"+suffix
	if err := adm.CreateTopicInCluster(ctx, cluster, admin.TopicConfig{Name: dlqTopic, ReadQueues: 1, WriteQueues: 1, Perm: 6}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, liveTimeout, "the dead-letter test topic's route", func() bool {
		r, err := adm.TopicRoute(ctx, dlqTopic)
		return err == nil && len(r.QueueDatas) > 0
	})
	b.open("/dashboard") // the dashboard's first sample, before these sends
	send(dlqTopic, 100, 2)
	failing := startFailingConsumer(t, ctx, ns, dlqGroup, dlqTopic)
	testutil.WaitFor(t, liveTimeout, "two dead letters", func() bool {
		st, err := adm.TopicStats(ctx, rocketmq.DLQTopic(dlqGroup))
		var n int64
		for _, o := range st {
			n += o.MaxOffset - o.MinOffset
		}
		return err == nil && n == 2
	})
	stopConsumer(t, failing)
	b.open("/groups/" + dlqGroup + "/dlq")
	b.waitCount("#dlq-messages tbody tr[data-msgid]", 2)
	b.waitText("#dlq-messages tbody tr[data-msgid] .origin", dlqTopic)
	b.shot("dlq")
	b.click("#dlq-messages tbody tr[data-msgid] input.pick")
	if resp := b.submit("dlq-resend-selected"); resp.Status != http.StatusOK {
		t.Fatalf("resend a dead letter: status %d", resp.Status)
	}
	b.noError()
	b.waitCount("#dlq-resent tbody tr[data-msgid]", 1)
	if id := b.text("#dlq-resent tbody tr .new-msgid"); len(id) != 32 {
		t.Fatalf("resent as %q", id)
	}
	exp, err := http.Get(srv.URL + "/groups/" + dlqGroup + "/dlq/export?format=csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(exp.Body).ReadAll()
	exp.Body.Close()
	if err != nil || len(recs) != 3 || recs[1][2] != dlqTopic {
		t.Fatalf("CSV export: %v %v", recs, err)
	}

	// The dashboard counts the topic's messages since its first sample.
	b.open("/dashboard")
	b.waitCount(`#top-topics tr[data-topic="`+dlqTopic+`"]`, 1)
	b.waitAtLeast("#dash-tps-chart svg .legend", 2)
	b.waitAtLeast(`#dash-top-chart svg g.bar`, 1)
	b.shot("dashboard")

	// Chinese, then back.
	b.open("/topics?lang=zh")
	b.waitText("#nav-topics", "主题")
	b.waitText("#create-topic-submit", "创建 / 更新")
	b.shot("topics-zh")
	b.open("/groups")
	b.waitText("#nav-groups", "消费组")
	b.open("/topics?lang=en")
	b.waitText("#nav-topics", "Topics")

	// The cluster page shows the brokers and the TPS chart.
	b.open("/")
	b.waitCount("#brokers tbody tr[data-broker]", masters)
	b.waitAtLeast("#tps-chart svg .legend", 2)
	b.shot("cluster")

	// A console with login sends the browser to the form first.
	users := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(users, []byte("operator:"+weakHash(t, "op-pass")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	us, err := console.LoadUsers(users)
	if err != nil {
		t.Fatal(err)
	}
	lh, err := console.New(console.Config{Admin: adm, Title: "go-rocketmq", Users: us})
	if err != nil {
		t.Fatal(err)
	}
	lsrv := httptest.NewServer(lh)
	t.Cleanup(lsrv.Close)
	b.base = lsrv.URL
	b.open("/topics")
	b.waitCount("#login", 1)
	b.set("#login [name=user]", "operator")
	b.set("#login [name=password]", "wrong")
	if resp := b.submit("login-submit"); resp.Status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: status %d", resp.Status)
	}
	b.set("#login [name=password]", "op-pass")
	b.shot("login")
	if resp := b.submit("login-submit"); resp.Status != http.StatusOK || pathOf(t, resp.URL) != "/topics" {
		t.Fatalf("login: landed on %s (status %d)", resp.URL, resp.Status)
	}
	b.waitText("#user", "operator")
}

// weakHash is a users-file hash with few iterations, so that the race
// detector's slow PBKDF2 does not cost seconds; the console accepts any
// count from 1000.
func weakHash(t *testing.T, pw string) string {
	t.Helper()
	salt := []byte("console-test-salt")
	key, err := pbkdf2.Key(sha256.New, pw, salt, 1000, 32)
	if err != nil {
		t.Fatal(err)
	}
	return "pbkdf2-sha256$1000$" + base64.RawStdEncoding.EncodeToString(salt) + "$" + base64.RawStdEncoding.EncodeToString(key)
}

func startProducer(t *testing.T, ctx context.Context, ns, group string, traced bool) *producer.Producer {
	t.Helper()
	opts := []producer.Option{producer.WithGroup(group), producer.WithNameServers(ns)}
	if traced {
		opts = append(opts, producer.WithTrace(""))
	}
	p, err := producer.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// startFailingConsumer fails every message once, with no retries allowed,
// so each goes to the group's dead-letter topic.
func startFailingConsumer(t *testing.T, ctx context.Context, ns, group, topic string) *consumer.PushConsumer {
	t.Helper()
	c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(ns),
		consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithMaxReconsumeTimes(0))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.All, func(context.Context, []*rocketmq.MessageExt) (consumer.Result, error) {
		return consumer.RetryLater, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}

// committedLag is the group's lag on topic as the brokers report it, or
// -1 before any queue has a committed offset.
func committedLag(ctx context.Context, adm *admin.Admin, group, topic string) int64 {
	cs, err := adm.ConsumeStats(ctx, group, topic)
	if err != nil || len(cs.Queues) == 0 {
		return -1
	}
	for _, w := range cs.Queues {
		if w.ConsumerOffset == 0 && w.BrokerOffset > 0 {
			return -1
		}
	}
	return cs.Lag()
}

func startConsumer(t *testing.T, ctx context.Context, ns, group, topic string, consumed *atomic.Int64, traced bool) *consumer.PushConsumer {
	t.Helper()
	opts := []consumer.Option{consumer.WithGroup(group), consumer.WithNameServers(ns),
		consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithOffsetPersistInterval(500 * time.Millisecond)}
	if traced {
		opts = append(opts, consumer.WithTrace(""))
	}
	c, err := consumer.NewPush(opts...)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		consumed.Add(int64(len(msgs)))
		return consumer.Success, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}

func stopConsumer(t *testing.T, c *consumer.PushConsumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("stop the consumer: %v", err)
	}
}

func pathOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatalf("bad URL %q: %v", u, err)
	}
	return pu.Path
}

// sameJSON reports whether got is a JSON text of the same value as want.
func sameJSON(got string, want []byte) bool {
	var a, b any
	return json.Unmarshal([]byte(got), &a) == nil && json.Unmarshal(want, &b) == nil && reflect.DeepEqual(a, b)
}

// browser is one headless Chromium tab on the console.
type browser struct {
	t     *testing.T
	ctx   context.Context // the tab
	base  string
	shots string // directory of the screenshots; "" takes none
}

func newBrowser(t *testing.T, exe, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // the tests run as root
		chromedp.WindowSize(1280, 860),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc) // ends the browser process and waits for it
	tctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	b := &browser{t: t, ctx: tctx, base: base, shots: os.Getenv(envScreenshots)}
	// The first action starts the browser and opens the tab; both live as
	// long as the context it runs with, so that is the tab's own.
	if err := chromedp.Do(tctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	return b
}

// step runs f with the step deadline.
func (b *browser) step(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	return f(ctx)
}

// where describes the page for a failure: its URL and any error it shows.
func (b *browser) where() string {
	var loc, shown string
	_ = b.step(func(ctx context.Context) error {
		var err error
		loc, err = chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			return err
		}
		shown, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("error") || {textContent: ""}).textContent`))
		return err
	})
	if shown != "" {
		return fmt.Sprintf("page %s showing error %q", loc, shown)
	}
	return "page " + loc
}

// open loads a console page and checks it answered 200 with the nav links.
func (b *browser) open(path string) {
	b.t.Helper()
	b.openStatus(path, http.StatusOK)
}

// openStatus loads a console page and checks its status and nav links.
func (b *browser) openStatus(path string, status int64) {
	b.t.Helper()
	var resp *network.Response
	err := b.step(func(ctx context.Context) error {
		var err error
		resp, err = chromedp.Run(ctx, chromedp.NavigateResponse(b.base+path))
		return err
	})
	if err != nil {
		b.t.Fatalf("open %s: %v", path, err)
	}
	if resp.Status != status {
		b.t.Fatalf("open %s: status %d, want %d (%s)", path, resp.Status, status, b.where())
	}
	b.waitCount("#nav-cluster, #nav-topics, #nav-groups, #nav-messages", 4)
}

// submit clicks a form's button and returns the response of the page it
// leads to, after redirects.
func (b *browser) submit(buttonID string) *network.Response {
	b.t.Helper()
	return b.navigate("click #"+buttonID, chromedp.Click(chromedp.ID(buttonID)))
}

// follow clicks a link.
func (b *browser) follow(sel string) *network.Response {
	b.t.Helper()
	return b.navigate("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

func (b *browser) navigate(what string, a chromedp.Action[chromedp.Void]) *network.Response {
	b.t.Helper()
	var resp *network.Response
	err := b.step(func(ctx context.Context) error {
		var err error
		resp, err = chromedp.RunResponse(ctx, a)
		return err
	})
	if err != nil {
		b.t.Fatalf("%s: %v (%s)", what, err, b.where())
	}
	return resp
}

// set sets the value of a form field.
func (b *browser) set(sel, value string) {
	b.t.Helper()
	if err := b.step(func(ctx context.Context) error {
		return chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), value))
	}); err != nil {
		b.t.Fatalf("set %s: %v (%s)", sel, err, b.where())
	}
}

func (b *browser) click(sel string) {
	b.t.Helper()
	if err := b.step(func(ctx context.Context) error {
		return chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
	}); err != nil {
		b.t.Fatalf("click %s: %v (%s)", sel, err, b.where())
	}
}

// chooseFormat picks a body format in select#body-format as a person
// would, which fires its change event.
func (b *browser) chooseFormat(format string) {
	b.t.Helper()
	if err := b.step(func(ctx context.Context) error {
		return chromedp.Do(ctx,
			chromedp.Focus(chromedp.ID("body-format")),
			chromedp.SetValue(chromedp.ID("body-format"), format),
			chromedp.Evaluate[chromedp.Void](`document.getElementById("body-format").dispatchEvent(new Event("change", {bubbles: true}))`))
	}); err != nil {
		b.t.Fatalf("choose body format %s: %v (%s)", format, err, b.where())
	}
}

func (b *browser) eval(expr string) bool {
	b.t.Helper()
	var v bool
	if err := b.step(func(ctx context.Context) error {
		var err error
		v, err = chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		return err
	}); err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// text returns the trimmed text of the first element matching sel, or
// "(none)" when there is none.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	if err := b.step(func(ctx context.Context) error {
		var err error
		s, err = chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
			`(e => e === null ? "(none)" : e.textContent.trim())(document.querySelector(%s))`, jsString(sel))))
		return err
	}); err != nil {
		b.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// waitFor polls the page predicate fn(...args) until it is true or
// timeout, then fails with describe().
func (b *browser) waitFor(timeout time.Duration, fn string, describe func() string, args ...any) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(b.ctx, deadline.Add(5*time.Second))
	defer cancel()
	var err error
	// Right after a navigation the browser may still name the old
	// document's execution context ("Cannot find context with specified
	// id"); such an error is retried a few times, a timeout is not.
	for range 5 {
		_, err = chromedp.Run(ctx, chromedp.PollFunction[chromedp.Void](fn,
			chromedp.WithPollingArgs(args...),
			chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil || errors.Is(err, chromedp.ErrPollingTimeout) || ctx.Err() != nil || time.Until(deadline) <= 0 {
			break
		}
	}
	if err != nil {
		b.t.Fatalf("%s after %v: %v (%s)", describe(), timeout, err, b.where())
	}
}

// waitText waits until the first element matching sel shows want. The
// console's live values change every 2 s, so it waits liveTimeout.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	b.waitFor(liveTimeout,
		`(sel, want) => { const e = document.querySelector(sel); return e !== null && e.textContent.trim() === want; }`,
		func() string { return fmt.Sprintf("%s shows %q, want %q", sel, b.text(sel), want) },
		sel, want)
}

// waitCount waits until n elements match sel.
func (b *browser) waitCount(sel string, n int) {
	b.t.Helper()
	b.waitFor(stepTimeout,
		`(sel, n) => document.querySelectorAll(sel).length === n`,
		func() string {
			var got int
			_ = b.step(func(ctx context.Context) error {
				var err error
				got, err = chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel))))
				return err
			})
			return fmt.Sprintf("%s matches %d elements, want %d", sel, got, n)
		},
		sel, n)
}

// count returns how many elements match sel now.
func (b *browser) count(sel string) int {
	b.t.Helper()
	var n int
	if err := b.step(func(ctx context.Context) error {
		var err error
		n, err = chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel))))
		return err
	}); err != nil {
		b.t.Fatalf("count %s: %v", sel, err)
	}
	return n
}

// waitAtLeast waits until at least n elements match sel.
func (b *browser) waitAtLeast(sel string, n int) {
	b.t.Helper()
	b.waitFor(stepTimeout,
		`(sel, n) => document.querySelectorAll(sel).length >= n`,
		func() string { return fmt.Sprintf("%s matches %d elements, want at least %d", sel, b.count(sel), n) },
		sel, n)
}

func (b *browser) evalString(expr string) string {
	b.t.Helper()
	var v string
	if err := b.step(func(ctx context.Context) error {
		var err error
		v, err = chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		return err
	}); err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitSum waits until the integers in the elements matching sel add up
// to n.
func (b *browser) waitSum(sel string, n int) {
	b.t.Helper()
	const sum = `sel => Array.from(document.querySelectorAll(sel)).reduce((s, e) => s + parseInt(e.textContent, 10), 0)`
	b.waitFor(stepTimeout, `(sel, n) => (`+sum+`)(sel) === n`,
		func() string {
			var got int
			_ = b.step(func(ctx context.Context) error {
				var err error
				got, err = chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`(%s)(%s)`, sum, jsString(sel))))
				return err
			})
			return fmt.Sprintf("%s add up to %d, want %d", sel, got, n)
		},
		sel, n)
}

// markPage tags the loaded document; checkMarked fails when the document
// was replaced since, so a value seen changing was updated in place.
func (b *browser) markPage() {
	b.t.Helper()
	b.eval(`(window.consoleTestMark = true)`)
}

func (b *browser) checkMarked() {
	b.t.Helper()
	if !b.eval(`window.consoleTestMark === true`) {
		b.t.Fatalf("the page was reloaded (%s)", b.where())
	}
}

// noError fails when the page shows div#error.
func (b *browser) noError() {
	b.t.Helper()
	if s := b.text("#error"); s != "(none)" {
		b.t.Fatalf("the page shows an error: %q (%s)", s, b.where())
	}
}

// shot writes a PNG of the whole page to the screenshot directory.
func (b *browser) shot(name string) {
	b.t.Helper()
	if b.shots == "" {
		return
	}
	var png []byte
	if err := b.step(func(ctx context.Context) error {
		var err error
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		return err
	}); err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(b.shots, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
