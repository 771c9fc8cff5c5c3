package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestPages: every page answers with the nav links and sets the CSRF
// cookie; the cluster page shows the broker with its version.
func TestPages(t *testing.T) {
	e := start(t)
	for _, path := range []string{"/", "/topics", "/topics/TopicTest", "/groups", "/groups/g1", "/messages",
		"/messages?by=key&topic=TopicTest&key=none", "/producers", "/producers?group=pg&topic=TopicTest",
		"/dashboard", "/trace", "/trace?by=key&key=none", "/groups/g1/dlq", "/topics?kind=system", "/groups?kind=system&sort=lag"} {
		resp, err := e.cli.Get(e.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		p := readPage(t, resp)
		if ok := map[string]bool{"/dashboard": true, "/trace": true, "/groups/g1/dlq": true, "/topics?kind=system": true, "/groups?kind=system&sort=lag": true}; ok[path] && p.status != http.StatusOK {
			t.Errorf("%s: %d %s", path, p.status, errorText(p.body))
		}
		for _, id := range []string{"nav-dashboard", "nav-cluster", "nav-topics", "nav-groups", "nav-messages", "nav-trace"} {
			if !strings.Contains(p.body, `id="`+id+`"`) {
				t.Errorf("%s: no a#%s", path, id)
			}
		}
		var tok string
		for _, c := range resp.Cookies() {
			if c.Name == csrfCookie {
				tok = c.Value
			}
		}
		if !validToken(tok) {
			t.Errorf("%s: CSRF cookie %q", path, tok)
		}
	}
	p := e.get(t, "/")
	if p.status != http.StatusOK || !strings.Contains(p.body, `data-broker="broker-a/0"`) {
		t.Fatalf("cluster page %d: %s", p.status, p.body)
	}
	if v, _ := cell(p.body, "data-broker", "broker-a/0", "version"); v == "" {
		t.Errorf("no broker version on the cluster page")
	}
	if v, _ := cell(p.body, "data-broker", "broker-a/0", "disk"); !strings.HasSuffix(strings.TrimSpace(v), "%") {
		t.Errorf("disk use %q, want a percentage", v)
	}
	for _, path := range []string{"/static/console.js", "/static/console.css"} {
		if p := e.get(t, path); p.status != http.StatusOK || len(p.body) < 100 {
			t.Errorf("%s: %d, %d bytes", path, p.status, len(p.body))
		}
	}
}

// TestTopicCreateAndDelete: a topic created through the form appears in
// the list and on its page with its queues; deleting it removes it.
func TestTopicCreateAndDelete(t *testing.T) {
	e := start(t)
	topic := name(t, "CT")
	p := e.createTopic(t, topic, 3)
	for q := range 3 {
		key := "broker-a/" + strconv.Itoa(q)
		if v, ok := cell(p.body, "data-queue", key, "max"); !ok || v != "0" {
			t.Errorf("queue %s max %q (row found %v)", key, v, ok)
		}
	}
	l := e.get(t, "/topics?q="+url.QueryEscape(topic))
	if !strings.Contains(l.body, `<tr data-topic="`+topic+`">`) {
		t.Fatalf("topic list does not show %s", topic)
	}
	e.send(t, topic, "pg_"+topic, 6)
	p = e.get(t, "/topics/"+topic)
	var total int64
	for q := range 3 {
		v, _ := cell(p.body, "data-queue", "broker-a/"+strconv.Itoa(q), "max")
		n, _ := strconv.ParseInt(v, 10, 64)
		total += n
		if lu, _ := cell(p.body, "data-queue", "broker-a/"+strconv.Itoa(q), "last-updated"); n > 0 && lu == "-" {
			t.Errorf("queue %d: no last update", q)
		}
	}
	if total != 6 {
		t.Fatalf("max offsets sum to %d after 6 sends", total)
	}

	d := e.post(t, "/topics/"+topic+"/delete", url.Values{})
	if d.status != http.StatusOK || d.url != "/topics" {
		t.Fatalf("delete: %d at %s: %s", d.status, d.url, errorText(d.body))
	}
	ctx := ctxT(t)
	testutil.WaitFor(t, wait, "the topic gone", func() bool {
		ts, err := e.adm.Topics(ctx)
		for _, x := range ts {
			if x == topic {
				return false
			}
		}
		return err == nil
	})
	if l := e.get(t, "/topics?q="+url.QueryEscape(topic)); strings.Contains(l.body, `data-topic="`+topic+`"`) {
		t.Fatal("deleted topic still listed")
	}
}

// TestBadInputShown: a bad topic name and a bad time are shown in
// div#error with 400, and nothing is created.
func TestBadInputShown(t *testing.T) {
	e := start(t)
	cases := []struct {
		path string
		form url.Values
		want string
	}{
		{"/topics", url.Values{"topic": {"bad topic!"}}, "illegal characters"},
		{"/topics", url.Values{"topic": {"OkTopic"}, "queues": {"x"}}, "not a number"},
		{"/topics", url.Values{"topic": {"OkTopic"}, "perm": {"9"}}, "perm 9"},
		{"/groups", url.Values{"group": {"bad group!"}}, "illegal characters"},
		{"/groups/g1/reset", url.Values{"topic": {"TopicTest"}, "time": {"yesterday"}}, "unix milliseconds"},
	}
	for _, c := range cases {
		p := e.post(t, c.path, c.form)
		if p.status != http.StatusBadRequest || !strings.Contains(errorText(p.body), c.want) {
			t.Errorf("POST %s %v: %d, error %q, want 400 with %q", c.path, c.form, p.status, errorText(p.body), c.want)
		}
	}
	if p := e.get(t, "/topics/bad%20topic!"); p.status != http.StatusBadRequest || errorText(p.body) == "" {
		t.Errorf("topic page of a bad name: %d %q", p.status, errorText(p.body))
	}
	if p := e.get(t, "/messages?by=key&topic=bad%20topic&key=k"); p.status != http.StatusBadRequest || errorText(p.body) == "" {
		t.Errorf("query with a bad topic: %d %q", p.status, errorText(p.body))
	}
	ts, err := e.adm.Topics(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x == "OkTopic" {
			t.Error("OkTopic created despite bad fields")
		}
	}
}

// TestCSRF: a POST without the cookie's token, or with another, is
// refused with 403 and changes nothing; GET on an action is not allowed.
func TestCSRF(t *testing.T) {
	e := start(t)
	tok := e.csrf(t)
	topic := name(t, "CSRF")
	for _, form := range []url.Values{
		{"topic": {topic}},
		{"topic": {topic}, "csrf": {""}},
		{"topic": {topic}, "csrf": {strings.Repeat("0", 32)}},
		{"topic": {topic}, "csrf": {tok + "0"}},
	} {
		resp, err := e.cli.PostForm(e.http.URL+"/topics", form)
		if err != nil {
			t.Fatal(err)
		}
		if p := readPage(t, resp); p.status != http.StatusForbidden {
			t.Errorf("POST with csrf %q: %d, want 403", form.Get("csrf"), p.status)
		}
	}
	// The right token from another client (no cookie) is refused too.
	resp, err := http.PostForm(e.http.URL+"/topics", url.Values{"topic": {topic}, "csrf": {tok}})
	if err != nil {
		t.Fatal(err)
	}
	if p := readPage(t, resp); p.status != http.StatusForbidden {
		t.Errorf("POST without the cookie: %d, want 403", p.status)
	}
	// Every form of the console checks the token.
	for _, path := range []string{"/topics/TopicTest/send", "/topics/TopicTest/delete", "/groups/g1/config", "/groups/g1/skip",
		"/groups/g1/reset", "/groups/g1/delete", "/groups/g1/dlq/resend", "/messages/resend", "/groups", "/login", "/logout"} {
		resp, err := e.cli.PostForm(e.http.URL+path, url.Values{"csrf": {strings.Repeat("0", 32)}, "all": {"true"}})
		if err != nil {
			t.Fatal(err)
		}
		if p := readPage(t, resp); p.status != http.StatusForbidden {
			t.Errorf("POST %s with a wrong token: %d, want 403", path, p.status)
		}
	}
	if p := e.get(t, "/topics/"+topic+"/delete"); p.status != http.StatusMethodNotAllowed && p.status != http.StatusNotFound {
		t.Errorf("GET of an action: %d", p.status)
	}
	if _, err := e.adm.TopicRoute(ctxT(t), topic); err == nil {
		t.Fatal("topic created by a refused POST")
	}
}

// TestLoopbackOnly: requests from another host, or naming another Host,
// are refused unless AllowRemote; Listen refuses a non-loopback address.
func TestLoopbackOnly(t *testing.T) {
	e := start(t)
	cases := []struct {
		remote, host string
		allow        bool
		want         int
	}{
		{"127.0.0.1:5000", "127.0.0.1:8080", false, http.StatusOK},
		{"[::1]:5000", "localhost:8080", false, http.StatusOK},
		{"192.0.2.1:5000", "127.0.0.1:8080", false, http.StatusForbidden},
		{"127.0.0.1:5000", "evil.example:8080", false, http.StatusForbidden},
		{"192.0.2.1:5000", "console.example", true, http.StatusOK},
	}
	for _, c := range cases {
		srv, err := New(Config{Admin: e.adm, AllowRemote: c.allow})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/topics", nil)
		r.RemoteAddr, r.Host = c.remote, c.host
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%+v: %d", c, w.Code)
		}
	}
	if _, err := Listen("0.0.0.0:0", false); !errors.Is(err, ErrRemote) {
		t.Errorf("Listen 0.0.0.0: %v, want ErrRemote", err)
	}
	if _, err := Listen("example.com:0", false); !errors.Is(err, ErrRemote) {
		t.Errorf("Listen example.com: %v, want ErrRemote", err)
	}
	ln, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := ListenAndServe(ctxT(t), "0.0.0.0:0", e.srv); !errors.Is(err, ErrRemote) {
		t.Errorf("ListenAndServe 0.0.0.0: %v", err)
	}
}

// TestGroupLagAndReset: the group page shows its members while they run,
// the lag per queue and in total (also from the JSON), and resetting the
// offset to the start through the form brings the lag back to every
// message.
func TestGroupLagAndReset(t *testing.T) {
	e := start(t)
	topic, group := name(t, "LT"), name(t, "lg")
	e.createTopic(t, topic, 2)
	e.send(t, topic, "pg_"+topic, 8)
	var n atomic.Int64
	stop := e.consume(t, group, topic, &n)
	ctx := ctxT(t)
	testutil.WaitFor(t, wait, "8 consumed and committed", func() bool {
		cs, err := e.adm.ConsumeStats(ctx, group, topic)
		return n.Load() >= 8 && err == nil && cs.Lag() == 0 && len(cs.Queues) == 2
	})
	p := e.get(t, "/groups/"+group)
	cc, err := e.adm.ConsumerConnection(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	id := cc.ConnectionSet[0].ClientID
	if lang, ok := cell(p.body, "data-client", id, "language"); !ok || lang != "GO" {
		t.Errorf("member %s: language %q (row %v)", id, lang, ok)
	}
	if v, _ := cell(p.body, "data-client", id, "version"); v == "" || v == "0" {
		t.Errorf("member version %q", v)
	}
	if lag, _ := byID(p.body, "span", "lag-total"); lag != "0" {
		t.Errorf("lag %q after consuming everything", lag)
	}
	// The reset form offers the group's topic, not its retry topic.
	if !strings.Contains(p.body, `list="group-topics" required value="`+topic+`"`) {
		t.Errorf("reset form does not offer %s first", topic)
	}
	if l := e.get(t, "/groups?q="+group); !strings.Contains(l.body, `data-group="`+group+`"`) {
		t.Error("group not listed")
	}
	stop()
	testutil.WaitFor(t, wait, "the member gone", func() bool {
		_, err := e.adm.ConsumerConnection(ctx, group)
		return errors.Is(err, remoting.ErrConsumerNotOnline)
	})

	r := e.post(t, "/groups/"+group+"/reset", url.Values{"topic": {topic}, "time": {"0"}, "force": {"true"}})
	if r.status != http.StatusOK || r.url != "/groups/"+group {
		t.Fatalf("reset: %d at %s: %s", r.status, r.url, errorText(r.body))
	}
	if lag, _ := byID(r.body, "span", "lag-total"); lag != "8" {
		t.Errorf("lag %q after the reset, want 8", lag)
	}
	var perQueue int64
	for q := range 2 {
		key := topic + "@broker-a/" + strconv.Itoa(q)
		v, ok := cell(r.body, "data-queue", key, "lag")
		x, _ := strconv.ParseInt(v, 10, 64)
		if !ok {
			t.Errorf("no row %s", key)
		}
		if c, _ := cell(r.body, "data-queue", key, "consumer-offset"); c != "0" {
			t.Errorf("queue %s consumer offset %q after the reset", key, c)
		}
		perQueue += x
	}
	if perQueue != 8 {
		t.Errorf("lag per queue sums to %d", perQueue)
	}
	resp, err := e.cli.Get(e.http.URL + "/api/groups/" + group + "/lag")
	if err != nil {
		t.Fatal(err)
	}
	var lj struct {
		Total  int64 `json:"total"`
		Queues []struct {
			Lag int64 `json:"lag"`
		} `json:"queues"`
		History [][2]int64 `json:"history"`
	}
	err = json.NewDecoder(resp.Body).Decode(&lj)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, q := range lj.Queues {
		sum += q.Lag
	}
	// The queues include the group's retry topic.
	if lj.Total != 8 || len(lj.Queues) < 2 || sum != 8 {
		t.Errorf("lag JSON %+v", lj)
	}
	if len(lj.History) < 2 || lj.History[len(lj.History)-1][1] != 8 {
		t.Errorf("lag history %v", lj.History)
	}

	// Deleting the group through its form.
	d := e.post(t, "/groups/"+group+"/delete", url.Values{})
	if d.status != http.StatusOK || d.url != "/groups" {
		t.Fatalf("delete group: %d at %s: %s", d.status, d.url, errorText(d.body))
	}
	if strings.Contains(d.body, `data-group="`+group+`"`) {
		t.Error("deleted group still listed")
	}
	if d := e.post(t, "/groups/"+group+"/delete", url.Values{}); d.status != http.StatusNotFound || errorText(d.body) == "" {
		t.Errorf("deleting it again: %d %q", d.status, errorText(d.body))
	}
}

// TestMessages: a message is found by key, by id and by time, its page
// shows the body as text, JSON and hex, its properties and the group that
// consumed it, and resending it to a member succeeds.
func TestMessages(t *testing.T) {
	e := start(t)
	topic, group := name(t, "MT"), name(t, "mg")
	e.createTopic(t, topic, 2)
	begin := time.Now().Add(-time.Second)
	res := e.send(t, topic, "pg_"+topic, 5)
	end := time.Now().Add(time.Second)
	var n atomic.Int64
	e.consume(t, group, topic, &n)
	ctx := ctxT(t)
	testutil.WaitFor(t, wait, "5 consumed and committed", func() bool {
		cs, err := e.adm.ConsumeStats(ctx, group, topic)
		return n.Load() >= 5 && err == nil && cs.Lag() == 0
	})
	id := res[3].MsgID

	q := func(v url.Values) page {
		t.Helper()
		p := e.get(t, "/messages?"+v.Encode())
		if p.status != http.StatusOK {
			t.Fatalf("query %v: %d %s", v, p.status, errorText(p.body))
		}
		return p
	}
	if p := q(url.Values{"by": {"key"}, "topic": {topic}, "key": {"key-3"}}); !strings.Contains(p.body, `<tr data-msgid="`+id+`">`) {
		t.Errorf("by key: %s not found", id)
	} else if strings.Contains(p.body, `data-msgid="`+res[2].MsgID+`"`) {
		t.Errorf("by key: another message listed")
	}
	if p := q(url.Values{"by": {"id"}, "topic": {topic}, "id": {id}}); !strings.Contains(p.body, `<tr data-msgid="`+id+`">`) {
		t.Errorf("by id: %s not found", id)
	}
	if p := q(url.Values{"by": {"id"}, "topic": {topic}, "id": {res[3].OffsetMsgID}}); !strings.Contains(p.body, `<tr data-msgid="`+id+`">`) {
		t.Errorf("by offset id: %s not found", id)
	}
	p := q(url.Values{"by": {"time"}, "topic": {topic}, "begin": {begin.Format("2006-01-02T15:04:05")}, "end": {strconv.FormatInt(end.UnixMilli(), 10)}})
	for _, r := range res {
		if !strings.Contains(p.body, `<tr data-msgid="`+r.MsgID+`">`) {
			t.Errorf("by time: %s not found", r.MsgID)
		}
	}
	if p := q(url.Values{"by": {"time"}, "topic": {topic}, "begin": {"0"}, "end": {strconv.FormatInt(begin.Add(-time.Hour).UnixMilli(), 10)}}); strings.Contains(p.body, "data-msgid=") {
		t.Error("by time: messages found before they were sent")
	}

	v := e.get(t, "/messages/view?topic="+url.QueryEscape(topic)+"&id="+id)
	if v.status != http.StatusOK {
		t.Fatalf("view: %d %s", v.status, errorText(v.body))
	}
	if b, _ := byID(v.body, "pre", "body"); b != `{&#34;n&#34;:3}` {
		t.Errorf("text body %q", b)
	}
	if !strings.Contains(v.body, `<select id="body-format"`) || !strings.Contains(v.body, `id="properties"`) {
		t.Error("no format switch or properties table")
	}
	if k, _ := cell(v.body, "data-name", "KEYS", "value"); k != "key-3" {
		t.Errorf("KEYS property %q", k)
	}
	if tt, _ := cell(v.body, "data-group", group, "track-type"); tt != "CONSUMED" {
		t.Errorf("track of %s: %q", group, tt)
	}
	if h := e.get(t, "/messages/view?format=hex&topic="+url.QueryEscape(topic)+"&id="+id); !strings.Contains(h.body, "7b 22 6e 22 3a 33 7d") {
		t.Error("hex body missing")
	}
	if j := e.get(t, "/messages/view?format=json&topic="+url.QueryEscape(topic)+"&id="+id); !strings.Contains(j.body, "&#34;n&#34;: 3") {
		t.Error("JSON body not indented")
	}
	if p := e.get(t, "/messages/view?topic="+url.QueryEscape(topic)+"&id=00000000000000000000000000000000"); errorText(p.body) == "" {
		t.Error("unknown id: no error")
	}

	cc, err := e.adm.ConsumerConnection(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	before := n.Load()
	r := e.post(t, "/messages/resend", url.Values{"topic": {topic}, "id": {id}, "group": {group}, "client": {cc.ConnectionSet[0].ClientID}})
	if res, _ := byID(r.body, "td", "consume-result"); r.status != http.StatusOK || res != remoting.ConsumeResultSuccess {
		t.Fatalf("resend: %d, result %q, error %q", r.status, res, errorText(r.body))
	}
	if n.Load() != before+1 {
		t.Errorf("consumed %d after the resend, want %d", n.Load(), before+1)
	}
	if r := e.post(t, "/messages/resend", url.Values{"topic": {topic}, "id": {id}, "group": {group}, "client": {"nobody@1"}}); errorText(r.body) == "" {
		t.Error("resend to an unknown client: no error")
	}
}

// TestProducers: a live producer of a group is listed with its client id
// and language.
func TestProducers(t *testing.T) {
	e := start(t)
	topic := name(t, "PT")
	group := "pg_" + topic
	e.createTopic(t, topic, 1)
	p, err := newProducer(e, group)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(ctxT(t))
	// A producer heartbeats to the brokers it has sent to.
	m, err := producer.NewMessage(topic, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctxT(t), m); err != nil {
		t.Fatal(err)
	}
	var pg page
	testutil.WaitFor(t, wait, "the producer listed", func() bool {
		pg = e.get(t, "/producers?group="+group+"&topic="+topic)
		return strings.Contains(pg.body, "data-client=")
	})
	if !strings.Contains(pg.body, `<td class="language">GO</td>`) {
		t.Errorf("producer row without language GO: %s", pg.body)
	}
	if pg := e.get(t, "/producers?group=nobody&topic="+topic); strings.Contains(pg.body, "data-client=") {
		t.Error("a group without producers lists some")
	}
}

// TestStatsJSON: /api/stats sums the masters' put TPS and keeps a
// history that grows with each poll.
func TestStatsJSON(t *testing.T) {
	e := start(t)
	var s statsJSON
	for range 3 {
		resp, err := e.cli.Get(e.http.URL + "/api/stats")
		if err != nil {
			t.Fatal(err)
		}
		s = statsJSON{}
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(s.Brokers) != 1 || s.Brokers[0].Name != "broker-a" || len(s.History) != 3 || s.Time == 0 {
		t.Fatalf("stats %+v", s)
	}
	if !strings.HasPrefix(string(s.Chart), "<svg") || !strings.Contains(string(s.Chart), "Put TPS") {
		t.Errorf("stats chart %q", s.Chart)
	}
	if p := e.get(t, "/"); !strings.Contains(p.body, `<div id="tps-chart" class="chart-box" data-src="/api/stats"><svg`) {
		t.Error("cluster page without the chart")
	}
}

// TestACL: with ACL on, a console signing as an ordinary account shows
// NO_PERMISSION for what it may not do, and no page shows a secret.
func TestACL(t *testing.T) {
	const accounts = `accounts:
  - accessKey: console-user
    secretKey: console-user-SECRET
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
`
	c := rmqtest.StartCluster(t, rmqtest.WithACL(accounts))
	e := &env{c: c, ns: c.NameServerAddr()}
	e.adm = newAdmin(t, e.ns, admin.WithACL(remoting.ACLCredentials{AccessKey: "console-user", SecretKey: "console-user-SECRET"}))
	e.serve(t, Config{Admin: e.adm})
	p := e.post(t, "/topics", url.Values{"topic": {"AclTopic"}})
	if p.status != http.StatusForbidden || !strings.Contains(errorText(p.body), "NO_PERMISSION") {
		t.Fatalf("create as an ordinary account: %d, error %q", p.status, errorText(p.body))
	}
	for _, path := range []string{"/", "/topics", "/groups", "/messages", "/topics/TopicTest"} {
		if p := e.get(t, path); strings.Contains(p.body, "SECRET") {
			t.Errorf("%s shows the secret", path)
		}
	}
}

func TestParseTime(t *testing.T) {
	local := time.Date(2024, 5, 6, 7, 8, 9, 0, time.Local)
	cases := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"2024-05-06T07:08:09", local, false},
		{"2024-05-06T07:08", local.Add(-9 * time.Second), false},
		{"2024-05-06 07:08:09", local, false},
		{"2024-05-06 07:08", local.Add(-9 * time.Second), false},
		{"1714979289000", time.UnixMilli(1714979289000), false},
		{"yesterday", time.Time{}, true},
	}
	for _, c := range cases {
		got, err := parseTime(c.in, time.Now())
		if (err != nil) != c.err || !got.Equal(c.want) {
			t.Errorf("parseTime(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestInputTime(t *testing.T) {
	ms := time.Date(2024, 5, 6, 7, 8, 9, 0, time.Local).UnixMilli()
	for in, want := range map[string]string{"": "", "2024-05-06 07:08:09": "2024-05-06T07:08:09", strconv.FormatInt(ms, 10): "2024-05-06T07:08:09", "junk": "junk"} {
		if got := inputTime(in); got != want {
			t.Errorf("inputTime(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPaginate(t *testing.T) {
	var all []string
	for i := range 250 {
		all = append(all, fmt.Sprintf("T%03d", i))
	}
	cases := []struct {
		filter     string
		page       int
		first      string
		n, pages   int
		prev, next bool
	}{
		{"", 1, "T000", 100, 3, false, true},
		{"", 3, "T200", 50, 3, true, false},
		{"", 9, "T200", 50, 3, true, false},
		{"t1", 1, "T100", 100, 1, false, false},
		{"T", 2, "T100", 100, 3, true, true},
		{"T24", 0, "T240", 10, 1, false, false},
		{"none", 1, "", 0, 1, false, false},
	}
	for _, c := range cases {
		lp := paginate(all, c.filter, c.page, "/topics")
		first := ""
		if len(lp.Names) > 0 {
			first = lp.Names[0]
		}
		if first != c.first || len(lp.Names) != c.n || lp.Pages != c.pages || (lp.Prev != "") != c.prev || (lp.Next != "") != c.next {
			t.Errorf("%+v: %+v", c, lp)
		}
	}
}

func TestHistoryBounded(t *testing.T) {
	h := newHistory()
	t0 := time.Unix(1000, 0)
	for i := range historyPoints + 50 {
		h.add("a", t0.Add(time.Duration(i)*time.Second), int64(i))
	}
	pts := h.add("a", t0.Add(time.Hour), -1)
	if len(pts) != historyPoints || pts[len(pts)-1][1] != -1 || pts[0][1] != 51 {
		t.Fatalf("%d points, first %v last %v", len(pts), pts[0], pts[len(pts)-1])
	}
	for i := range historySeries + 10 {
		h.add(fmt.Sprint("s", i), t0.Add(time.Duration(i)*time.Millisecond), 1)
	}
	if len(h.series) != historySeries {
		t.Fatalf("%d series kept", len(h.series))
	}
}

// TestUnknownGroup: a group no broker knows is a 404 with the error
// banner and no forms; a group created through the form is a 200 before
// any member has joined or committed.
func TestUnknownGroup(t *testing.T) {
	e := start(t)
	p := e.get(t, "/groups/NoSuchGroup")
	if p.status != http.StatusNotFound || !strings.Contains(errorText(p.body), "NoSuchGroup") {
		t.Fatalf("unknown group: %d, error %q", p.status, errorText(p.body))
	}
	for _, id := range []string{"lag-total", "delete-group", "reset-offset"} {
		if strings.Contains(p.body, `id="`+id+`"`) {
			t.Errorf("unknown group page has #%s", id)
		}
	}
	g := name(t, "ng")
	if c := e.post(t, "/groups", url.Values{"group": {g}}); c.status != http.StatusOK || c.url != "/groups/"+g {
		t.Fatalf("create group: %d at %s: %s", c.status, c.url, errorText(c.body))
	}
	if p := e.get(t, "/groups/"+g); p.status != http.StatusOK || errorText(p.body) != "" || !strings.Contains(p.body, `id="lag-total"`) {
		t.Fatalf("new group: %d, error %q", p.status, errorText(p.body))
	}
}

// TestSendMessage: the topic page's form sends a message with its tag,
// keys, properties and body and shows the result; a bad property line or
// a console without a producer is a 400 and sends nothing.
func TestSendMessage(t *testing.T) {
	e := start(t)
	topic := name(t, "ST")
	e.createTopic(t, topic, 2)
	if p := e.post(t, "/topics/"+topic+"/send", url.Values{"body": {"x"}}); p.status != http.StatusBadRequest || !strings.Contains(errorText(p.body), "no producer") {
		t.Errorf("send without a producer: %d %q", p.status, errorText(p.body))
	}
	pr, err := newProducer(e, "pg_"+topic)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Shutdown(ctxT(t))
	e.serve(t, Config{Admin: e.adm, Producer: pr})
	if p := e.get(t, "/topics/"+topic); !strings.Contains(p.body, `id="send-message"`) {
		t.Fatal("no send form")
	}
	p := e.post(t, "/topics/"+topic+"/send", url.Values{"tag": {"TagS"}, "keys": {"k1 k2"}, "props": {"color=red\r\n\r\n size = 3 \n"}, "body": {"hello body"}})
	st, _ := byID(p.body, "td", "send-status")
	if p.status != http.StatusOK || st != "SEND_OK" {
		t.Fatalf("send: %d, status %q, error %q", p.status, st, errorText(p.body))
	}
	idCell, _ := byID(p.body, "td", "send-msgid")
	id := regexp.MustCompile(`>([0-9A-F]{32})<`).FindStringSubmatch(idCell)
	if id == nil {
		t.Fatalf("no message id in %q", idCell)
	}
	m, err := e.adm.ViewMessage(ctxT(t), topic, id[1])
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Body) != "hello body" || m.Tag() != "TagS" || strings.Join(m.Keys(), " ") != "k1 k2" || m.Properties["color"] != "red" || m.Properties["size"] != "3" {
		t.Errorf("sent %q tag %q keys %v props %v", m.Body, m.Tag(), m.Keys(), m.Properties)
	}
	before, _ := e.adm.TopicStats(ctxT(t), topic)
	if p := e.post(t, "/topics/"+topic+"/send", url.Values{"props": {"novalue"}, "body": {"x"}}); p.status != http.StatusBadRequest || !strings.Contains(errorText(p.body), "name=value") {
		t.Errorf("bad property: %d %q", p.status, errorText(p.body))
	} else if !strings.Contains(p.body, ">novalue</textarea>") {
		t.Error("the form lost what was typed")
	}
	after, _ := e.adm.TopicStats(ctxT(t), topic)
	var nb, na int64
	for mq, o := range before {
		nb += o.MaxOffset
		na += after[mq].MaxOffset
	}
	if na != nb {
		t.Errorf("a refused send stored a message: %d → %d", nb, na)
	}
}

// TestSkipAccumulated: skipping moves a group's offsets to the end, so its
// lag is 0 and nothing older is consumed; a group without offsets is a 400.
func TestSkipAccumulated(t *testing.T) {
	e := start(t)
	topic, group := name(t, "SK"), name(t, "sk")
	e.createTopic(t, topic, 2)
	e.send(t, topic, "pg_"+topic, 3)
	var n atomic.Int64
	stop := e.consume(t, group, topic, &n)
	ctx := ctxT(t)
	testutil.WaitFor(t, wait, "3 consumed and committed", func() bool {
		cs, err := e.adm.ConsumeStats(ctx, group, topic)
		return n.Load() >= 3 && err == nil && cs.Lag() == 0
	})
	stop()
	testutil.WaitFor(t, wait, "the member gone", func() bool {
		_, err := e.adm.ConsumerConnection(ctx, group)
		return errors.Is(err, remoting.ErrConsumerNotOnline)
	})
	e.send(t, topic, "pg_"+topic, 7)
	if p := e.get(t, "/groups/"+group); !strings.Contains(p.body, `data-confirm="Skip the 7 accumulated messages`) {
		t.Fatalf("skip form without a confirmation naming the lag: %s", p.body)
	}
	p := e.post(t, "/groups/"+group+"/skip", url.Values{})
	if p.status != http.StatusOK || p.url != "/groups/"+group {
		t.Fatalf("skip: %d at %s: %s", p.status, p.url, errorText(p.body))
	}
	if lag, _ := byID(p.body, "span", "lag-total"); lag != "0" {
		t.Errorf("lag %q after the skip", lag)
	}
	cs, err := e.adm.ConsumeStats(ctx, group, topic)
	if err != nil || cs.Lag() != 0 {
		t.Fatalf("lag after the skip: %v %v", cs, err)
	}
	for mq, w := range cs.Queues {
		if w.ConsumerOffset != w.BrokerOffset {
			t.Errorf("%v: consumer offset %d, broker offset %d", mq, w.ConsumerOffset, w.BrokerOffset)
		}
	}
	g2 := name(t, "sk2")
	e.post(t, "/groups", url.Values{"group": {g2}})
	if p := e.post(t, "/groups/"+g2+"/skip", url.Values{}); p.status != http.StatusBadRequest || !strings.Contains(errorText(p.body), "no committed offsets") {
		t.Errorf("skip of a group without offsets: %d %q", p.status, errorText(p.body))
	}
}

// TestGroupSettings: the group page shows the group's config per broker
// and its form changes it as updateSubGroup does; a bad number is a 400
// and changes nothing.
func TestGroupSettings(t *testing.T) {
	e := start(t)
	g := name(t, "gs")
	e.post(t, "/groups", url.Values{"group": {g}})
	p := e.get(t, "/groups/"+g)
	if v, _ := cell(p.body, "data-broker", "broker-a", "retry-max"); v != "16" {
		t.Fatalf("retry max times %q, want the default 16", v)
	}
	if !strings.Contains(p.body, `name="consumeEnable" type="checkbox" value="true" checked`) {
		t.Error("settings form does not start from the config")
	}
	form := url.Values{"consumeEnable": {"true"}, "retryQueueNums": {"2"}, "retryMaxTimes": {"3"}, "whichBrokerWhenConsumeSlowly": {"1"}}
	p = e.post(t, "/groups/"+g+"/config", form)
	if p.status != http.StatusOK || !strings.Contains(p.body, "saved the group") {
		t.Fatalf("save: %d %q", p.status, errorText(p.body))
	}
	gs, err := e.adm.Groups(ctxT(t), e.c.BrokerAddr("broker-a"))
	if err != nil {
		t.Fatal(err)
	}
	gc := gs[g]
	if !gc.ConsumeEnable || gc.ConsumeBroadcastEnable || gc.ConsumeFromMinEnable || gc.RetryQueueNums != 2 || gc.RetryMaxTimes != 3 || gc.WhichBrokerWhenConsumeSlowly != 1 {
		t.Errorf("config after the save %+v", gc)
	}
	if v, _ := cell(p.body, "data-broker", "broker-a", "broadcast"); v != "false" {
		t.Errorf("page shows broadcast %q", v)
	}
	if p := e.post(t, "/groups/"+g+"/config", url.Values{"retryMaxTimes": {"x"}}); p.status != http.StatusBadRequest {
		t.Errorf("bad number: %d", p.status)
	}
	if p := e.post(t, "/groups/"+g+"/config", url.Values{"retryQueueNums": {"999"}}); p.status != http.StatusBadRequest || !strings.Contains(errorText(p.body), "out of range") {
		t.Errorf("retry queues 999: %d %q", p.status, errorText(p.body))
	}
	if gs, _ := e.adm.Groups(ctxT(t), e.c.BrokerAddr("broker-a")); gs[g].RetryMaxTimes != 3 {
		t.Errorf("a refused save changed the config: %+v", gs[g])
	}
}

// TestListKinds: the topic list filters normal, retry, dead-letter and
// system topics; the group list keeps system groups on their own tab and
// shows each group's lag, sortable by it.
func TestListKinds(t *testing.T) {
	e := start(t)
	topic, hi, lo := name(t, "KT"), name(t, "khi"), name(t, "klo")
	e.createTopic(t, topic, 1)
	e.send(t, topic, "pg_"+topic, 5)
	ctx := ctxT(t)
	for _, g := range []string{hi, lo} {
		var n atomic.Int64
		stop := e.consume(t, g, topic, &n)
		testutil.WaitFor(t, wait, g+" consumed and committed", func() bool {
			cs, err := e.adm.ConsumeStats(ctx, g, topic)
			return n.Load() >= 5 && err == nil && cs.Lag() == 0
		})
		stop()
	}
	testutil.WaitFor(t, wait, "the members gone", func() bool {
		_, err1 := e.adm.ConsumerConnection(ctx, hi)
		_, err2 := e.adm.ConsumerConnection(ctx, lo)
		return errors.Is(err1, remoting.ErrConsumerNotOnline) && errors.Is(err2, remoting.ErrConsumerNotOnline)
	})
	if _, err := e.adm.ResetOffsetByTime(ctx, hi, topic, time.UnixMilli(1), true); err != nil {
		t.Fatal(err)
	}
	e.srv.cache.invalidate()

	has := func(p page, attr, name string) bool { return strings.Contains(p.body, `<tr `+attr+`="`+name+`">`) }
	cases := []struct {
		kind    string
		in, out []string
	}{
		{"", []string{topic, "%RETRY%" + hi, rocketmq.TopicAutoCreate}, nil},
		{"normal", []string{topic}, []string{"%RETRY%" + hi, rocketmq.TopicAutoCreate}},
		{"retry", []string{"%RETRY%" + hi, "%RETRY%" + lo}, []string{topic}},
		{"system", []string{rocketmq.TopicAutoCreate}, []string{topic, "%RETRY%" + hi}},
		{"dlq", nil, []string{topic, "%RETRY%" + hi}},
	}
	for _, c := range cases {
		p := e.get(t, "/topics?kind="+c.kind)
		for _, n := range c.in {
			if !has(p, "data-topic", n) {
				t.Errorf("kind %q: %s not listed", c.kind, n)
			}
		}
		for _, n := range c.out {
			if has(p, "data-topic", n) {
				t.Errorf("kind %q: %s listed", c.kind, n)
			}
		}
	}
	if k, _ := cell(e.get(t, "/topics").body, "data-topic", "%RETRY%"+hi, "kind"); k != "retry" {
		t.Errorf("retry topic's kind %q", k)
	}

	p := e.get(t, "/groups")
	if !has(p, "data-group", hi) || has(p, "data-group", "TOOLS_CONSUMER") {
		t.Errorf("default group list: %s listed %v, TOOLS_CONSUMER listed %v", hi, has(p, "data-group", hi), has(p, "data-group", "TOOLS_CONSUMER"))
	}
	if v, _ := cell(p.body, "data-group", hi, "lag"); v != "5" {
		t.Errorf("lag of %s %q, want 5", hi, v)
	}
	if v, _ := cell(p.body, "data-group", lo, "lag"); v != "0" {
		t.Errorf("lag of %s %q, want 0", lo, v)
	}
	if s := e.get(t, "/groups?kind=system"); !has(s, "data-group", "TOOLS_CONSUMER") || has(s, "data-group", hi) {
		t.Error("system tab does not list TOOLS_CONSUMER alone")
	}
	order := func(p page) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<tr data-group="([^"]+)">`).FindAllStringSubmatch(p.body, -1) {
			if m[1] == hi || m[1] == lo {
				out = append(out, m[1])
			}
		}
		return out
	}
	if o := order(e.get(t, "/groups?sort=lag&dir=desc")); len(o) != 2 || o[0] != hi {
		t.Errorf("by lag, descending: %v", o)
	}
	if o := order(e.get(t, "/groups?sort=lag&dir=asc")); len(o) != 2 || o[0] != lo {
		t.Errorf("by lag, ascending: %v", o)
	}
	if p := e.get(t, "/groups?sort=lag&dir=desc"); !strings.Contains(p.body, `id="sort-lag" href="/groups?dir=asc&amp;sort=lag"`) {
		t.Errorf("the lag header does not flip the order: %s", p.body)
	}
}
