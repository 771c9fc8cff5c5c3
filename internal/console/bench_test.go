package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// Sizes of the large cluster of the page benchmarks.
const (
	benchTopics = 10000
	benchGroups = 1000
)

// bigCluster starts a broker whose store already holds benchTopics topics
// and benchGroups groups (its config files written before it starts, as
// a broker that has run a long time has them), and a console on it.
func bigCluster(b *testing.B) *Server {
	b.Helper()
	dir := b.TempDir()
	cfgDir := filepath.Join(dir, "broker-a", "config")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		b.Fatal(err)
	}
	tw := remoting.TopicConfigSerializeWrapper{TopicConfigTable: make(map[string]remoting.TopicConfig, benchTopics),
		DataVersion: remoting.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: 1}}
	for i := range benchTopics {
		n := fmt.Sprintf("BenchTopic%05d", i)
		tw.TopicConfigTable[n] = remoting.TopicConfig{TopicName: n, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	}
	gw := remoting.SubscriptionGroupWrapper{SubscriptionGroupTable: make(map[string]remoting.SubscriptionGroupConfig, benchGroups),
		DataVersion: remoting.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: 1}}
	for i := range benchGroups {
		n := fmt.Sprintf("bench_group_%04d", i)
		gw.SubscriptionGroupTable[n] = remoting.NewSubscriptionGroupConfig(n)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "topics.json"), tw.AppendJSON(nil, remoting.JSONStandard), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "subscriptionGroup.json"), gw.AppendJSON(nil, remoting.JSONStandard), 0o644); err != nil {
		b.Fatal(err)
	}
	c := rmqtest.StartCluster(b, rmqtest.WithStoreDir(dir))
	adm := newAdmin(b, c.NameServerAddr())
	ctx := ctxT(b)
	testutil.WaitFor(b, wait, "every topic registered", func() bool {
		ts, err := adm.Topics(ctx)
		return err == nil && len(ts) >= benchTopics
	})
	srv, err := New(Config{Admin: adm})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

func benchPage(b *testing.B, srv *Server, path, row string, rows int, cold bool) {
	get := func() string {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr, r.Host = "127.0.0.1:40000", "127.0.0.1:8080"
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
		}
		return w.Body.String()
	}
	if n := strings.Count(get(), row); n != rows {
		b.Fatalf("%s: %d rows %q, want %d", path, n, row, rows)
	}
	b.ResetTimer()
	for b.Loop() {
		if cold {
			srv.cache.invalidate()
		}
		get()
	}
}

// BenchmarkTopicsPage: the topic list of a 10,000-topic cluster, a page
// in the middle and a filtered one; cold drops the cached list before
// each request, so it pays the NameServer call.
func BenchmarkTopicsPage(b *testing.B) {
	srv := bigCluster(b)
	for _, cold := range []bool{true, false} {
		b.Run(fmt.Sprintf("cold=%v/page50", cold), func(b *testing.B) {
			benchPage(b, srv, "/topics?page=50", "<tr data-topic=", pageSize, cold)
		})
		b.Run(fmt.Sprintf("cold=%v/filter", cold), func(b *testing.B) {
			benchPage(b, srv, "/topics?q=BenchTopic012", "<tr data-topic=", 100, cold)
		})
	}
}

// BenchmarkGroupsPage: the group list of a 1,000-group cluster (10,000
// topics), as BenchmarkTopicsPage.
func BenchmarkGroupsPage(b *testing.B) {
	srv := bigCluster(b)
	for _, cold := range []bool{true, false} {
		b.Run(fmt.Sprintf("cold=%v/page5", cold), func(b *testing.B) {
			benchPage(b, srv, "/groups?page=5", "<tr data-group=", pageSize, cold)
		})
	}
}

// BenchmarkPoll: one poll of a live chart, the request an open cluster or
// group page makes every 2 s. Client, console and broker share the
// process, so the time per poll bounds the broker's share from above.
func BenchmarkPoll(b *testing.B) {
	srv := bigCluster(b)
	for _, path := range []string{"/api/stats", "/api/groups/bench_group_0001/lag"} {
		b.Run(strings.TrimPrefix(path, "/api/"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("GET", path, nil)
				r.RemoteAddr, r.Host = "127.0.0.1:40000", "127.0.0.1:8080"
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
				}
			}
		})
	}
}
