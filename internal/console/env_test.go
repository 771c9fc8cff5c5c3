package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

const wait = 30 * time.Second

type env struct {
	c    *rmqtest.Cluster
	ns   string
	adm  *admin.Admin
	srv  *Server
	http *httptest.Server
	cli  *http.Client
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func newAdmin(t testing.TB, ns string, opts ...admin.Option) *admin.Admin {
	a, err := admin.New(append([]admin.Option{admin.WithNameServers(ns)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	return a
}

// start runs a cluster, an admin on it and a console over HTTP on
// loopback with a cookie-keeping client.
func start(t testing.TB, opts ...rmqtest.Option) *env {
	t.Helper()
	e := &env{c: rmqtest.StartCluster(t, opts...)}
	e.ns = e.c.NameServerAddr()
	e.adm = newAdmin(t, e.ns)
	e.serve(t, Config{Admin: e.adm})
	return e
}

func (e *env) serve(t testing.TB, cfg Config) {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.http = httptest.NewServer(srv)
	t.Cleanup(e.http.Close)
	jar, _ := cookiejar.New(nil)
	e.cli = &http.Client{Jar: jar, Timeout: wait}
}

type page struct {
	status int
	url    string
	body   string
}

func (e *env) get(t testing.TB, path string) page {
	t.Helper()
	resp, err := e.cli.Get(e.http.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return readPage(t, resp)
}

func readPage(t testing.TB, resp *http.Response) page {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{resp.StatusCode, resp.Request.URL.Path, string(b)}
}

// csrf returns the token the console set in the client's cookie jar,
// loading a page first when there is none.
func (e *env) csrf(t testing.TB) string {
	u, _ := url.Parse(e.http.URL)
	for range 2 {
		for _, c := range e.cli.Jar.Cookies(u) {
			if c.Name == csrfCookie {
				return c.Value
			}
		}
		e.get(t, "/")
	}
	t.Fatal("no CSRF cookie after a page")
	return ""
}

// post posts form with the page's CSRF token, following the redirect.
func (e *env) post(t testing.TB, path string, form url.Values) page {
	t.Helper()
	form.Set("csrf", e.csrf(t))
	resp, err := e.cli.PostForm(e.http.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	return readPage(t, resp)
}

// cell returns the text of the cell of class in the row whose attr is
// key, or "" with ok false.
func cell(body, attr, key, class string) (string, bool) {
	row := regexp.MustCompile(`(?s)<tr ` + attr + `="` + regexp.QuoteMeta(key) + `">(.*?)</tr>`).FindStringSubmatch(body)
	if row == nil {
		return "", false
	}
	c := regexp.MustCompile(`<td class="` + class + `">([^<]*)`).FindStringSubmatch(row[1])
	if c == nil {
		return "", false
	}
	return c[1], true
}

func byID(body, tag, id string) (string, bool) {
	m := regexp.MustCompile(`(?s)<` + tag + ` id="` + id + `"[^>]*>(.*?)</` + tag + `>`).FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func name(t testing.TB, prefix string) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
}

// createTopic creates topic through the console and waits for its route.
func (e *env) createTopic(t testing.TB, topic string, queues int) page {
	t.Helper()
	p := e.post(t, "/topics", url.Values{"topic": {topic}, "queues": {fmt.Sprint(queues)}, "perm": {"6"}})
	if p.status != http.StatusOK || p.url != "/topics/"+topic {
		t.Fatalf("create topic: %d at %s: %s", p.status, p.url, errorText(p.body))
	}
	ctx := ctxT(t)
	testutil.WaitFor(t, wait, "the topic's route", func() bool {
		r, err := e.adm.TopicRoute(ctx, topic)
		return err == nil && len(r.QueueDatas) > 0 && int(r.QueueDatas[0].WriteQueueNums) == queues
	})
	return p
}

func errorText(body string) string {
	s, _ := byID(body, "div", "error")
	return s
}

// send sends n messages, key "key-i", body `{"n":i}`; it returns the
// send results.
func (e *env) send(t testing.TB, topic, group string, n int) []*rocketmq.SendResult {
	t.Helper()
	p, err := producer.New(producer.WithGroup(group), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	var out []*rocketmq.SendResult
	for i := range n {
		m, err := producer.NewMessage(topic, []byte(fmt.Sprintf(`{"n":%d}`, i)), producer.Keys(fmt.Sprintf("key-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Send(ctxT(t), m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	return out
}

// consume starts a push consumer of group on topic from the first
// message; stop shuts it down.
func (e *env) consume(t testing.TB, group, topic string, count *atomic.Int64) (stop func()) {
	t.Helper()
	c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(e.ns),
		consumer.WithOffsetPersistInterval(100*time.Millisecond), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	}
	t.Cleanup(stop)
	err = c.Subscribe(topic, consumer.Tags("*"), func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		count.Add(int64(len(msgs)))
		return consumer.Success, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return stop
}

func newProducer(e *env, group string) (*producer.Producer, error) {
	p, err := producer.New(producer.WithGroup(group), producer.WithNameServers(e.ns))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return p, p.Start(ctx)
}
