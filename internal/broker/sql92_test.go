package broker

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// putProps stores one message with properties props.
func (e *pullEnv) putProps(t testing.TB, topic string, props map[string]string) {
	t.Helper()
	_, err := e.b.store.PutMessage(context.Background(), &store.PutRequest{
		RecordFields: message.RecordFields{
			Topic:         topic,
			Body:          []byte("body"),
			Properties:    message.EncodeProperties(props),
			BornTimestamp: time.Now().UnixMilli(),
			BornHost:      pullBornHost,
			StoreHost:     e.b.storeHost,
		},
	})
	if err != nil {
		t.Fatalf("PutMessage: %v", err)
	}
}

// sqlEnv is a broker with the property filter on and topic "PullSQL"
// holding messages a=0..5 with b alternating x, y (offset i has a=i).
func sqlEnv(t *testing.T, on bool) *pullEnv {
	e := pullTestBroker(t, func(c *Config) { c.EnablePropertyFilter = on })
	e.b.topics.ensure("PullSQL", 1, rocketmq.PermRead|rocketmq.PermWrite)
	for i := range 6 {
		b := "x"
		if i%2 == 1 {
			b = "y"
		}
		e.putProps(t, "PullSQL", map[string]string{"a": strconv.Itoa(i), "b": b})
	}
	return e
}

func bodyOffsets(t testing.TB, resp *remoting.Command) string {
	if len(resp.Body) == 0 {
		return "[]"
	}
	return fmt.Sprint(pullOffsets(pullDecode(t, resp.Body)))
}

func TestPullSQL92(t *testing.T) {
	e := sqlEnv(t, true)
	sql := pstr(remoting.ExpressionTypeSQL92)
	for _, tc := range []struct {
		name    string
		args    pullArgs
		code    int32
		remark  string
		offsets string
	}{
		{"numeric and string", pullArgs{sub: pstr("a > 1 AND b = 'x'"), exprType: sql}, remoting.Success, "FOUND", "[2 4]"},
		{"from an offset", pullArgs{offset: 3, sub: pstr("a > 1 AND b = 'x'"), exprType: sql}, remoting.Success, "FOUND", "[4]"},
		{"between", pullArgs{sub: pstr("a BETWEEN 1 AND 3"), exprType: sql}, remoting.Success, "FOUND", "[1 2 3]"},
		{"in", pullArgs{sub: pstr("b IN ('y')"), exprType: sql}, remoting.Success, "FOUND", "[1 3 5]"},
		{"missing property", pullArgs{sub: pstr("c IS NULL"), exprType: sql}, remoting.Success, "FOUND", "[0 1 2 3 4 5]"},
		{"lite pull", pullArgs{code: remoting.LitePullMessage, sub: pstr("a >= 5"), exprType: sql}, remoting.Success, "FOUND", "[5]"},
		{"none match", pullArgs{sub: pstr("c > 1"), exprType: sql}, remoting.PullRetryImmediately, "NO_MATCHED_MESSAGE", "[]"},
		{"bad expression", pullArgs{sub: pstr("a >"), exprType: sql}, remoting.SubscriptionParseFailed, remarkSubParseFailed, ""},
		{"empty expression", pullArgs{sub: pstr(""), exprType: sql}, remoting.SubscriptionParseFailed, remarkSubParseFailed, ""},
		{"unknown type", pullArgs{sub: pstr("a > 1"), exprType: pstr("XPATH")}, remoting.SubscriptionParseFailed, remarkSubParseFailed, ""},
		{"tags still by hash", pullArgs{sub: pstr("*"), exprType: pstr("TAG")}, remoting.Success, "FOUND", "[0 1 2 3 4 5]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args.group, tc.args.topic = "gSQL", "PullSQL"
			resp := e.invoke(t, tc.args.req())
			if resp.Code != tc.code || resp.Remark != tc.remark {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tc.code, tc.remark)
			}
			if tc.offsets == "" {
				return
			}
			if got := bodyOffsets(t, resp); got != tc.offsets {
				t.Fatalf("offsets %s, want %s", got, tc.offsets)
			}
			if h := pullHeader(t, resp); h.NextBeginOffset != 6 {
				t.Fatalf("next offset %d, want 6 (past the filtered messages)", h.NextBeginOffset)
			}
		})
	}
}

func TestPullSQL92Heartbeat(t *testing.T) {
	e := sqlEnv(t, true)
	sub := func(topic, expr, typ string, classFilter bool) remoting.SubscriptionData {
		return remoting.SubscriptionData{Topic: topic, SubString: expr, ExpressionType: typ, SubVersion: 10, ClassFilterMode: classFilter}
	}
	e.b.topics.ensure("PullSQLBad", 1, rocketmq.PermRead|rocketmq.PermWrite)
	e.b.topics.ensure("PullSQLClass", 1, rocketmq.PermRead|rocketmq.PermWrite)
	e.putProps(t, "PullSQLClass", map[string]string{"a": "0"})
	e.heartbeat(t, "gHB", "CLUSTERING",
		sub("PullSQL", "a < 2 OR b = 'y'", remoting.ExpressionTypeSQL92, false),
		sub("PullSQLBad", "a > ", remoting.ExpressionTypeSQL92, false),
		sub("PullSQLClass", "a > 100", remoting.ExpressionTypeSQL92, true))
	for _, tc := range []struct {
		name    string
		args    pullArgs
		code    int32
		remark  string
		offsets string
	}{
		{"filters by the heartbeat's expression", pullArgs{topic: "PullSQL", subVer: 10}, remoting.Success, "FOUND", "[0 1 3 5]"},
		{"newer subscription than the heartbeat", pullArgs{topic: "PullSQL", subVer: 11}, remoting.SubscriptionNotLatest, remarkSubNotLatest, ""},
		{"expression that does not compile", pullArgs{topic: "PullSQLBad"}, remoting.FilterDataNotExist, remarkFilterDataNotExist, ""},
		{"class filter mode takes all", pullArgs{topic: "PullSQLClass"}, remoting.Success, "FOUND", "[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args.group = "gHB"
			resp := e.invoke(t, tc.args.req())
			if resp.Code != tc.code || resp.Remark != tc.remark {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tc.code, tc.remark)
			}
			if tc.offsets != "" {
				if got := bodyOffsets(t, resp); got != tc.offsets {
					t.Fatalf("offsets %s, want %s", got, tc.offsets)
				}
			}
		})
	}
}

// Without EnablePropertyFilter a SQL92 subscription is refused however it
// reaches the broker, as by a default Java broker.
func TestPullSQL92Off(t *testing.T) {
	e := sqlEnv(t, false)
	e.heartbeat(t, "gOff", "CLUSTERING", remoting.SubscriptionData{
		Topic: "PullSQL", SubString: "a > 1", ExpressionType: remoting.ExpressionTypeSQL92})
	const remark = "The broker does not support consumer to filter message by SQL92"
	for _, args := range []pullArgs{
		{group: "gOff", topic: "PullSQL"},
		{group: "gOff", topic: "PullSQL", sub: pstr("a > 1"), exprType: pstr(remoting.ExpressionTypeSQL92)},
		{group: "gOff", topic: "PullSQL", sub: pstr("a >"), exprType: pstr(remoting.ExpressionTypeSQL92)},
	} {
		if resp := e.invoke(t, args.req()); resp.Code != remoting.SystemError || resp.Remark != remark {
			t.Fatalf("code %d remark %q, want SYSTEM_ERROR %q", resp.Code, resp.Remark, remark)
		}
	}
	if n := e.b.clients.filters.len(); n != 0 {
		t.Fatalf("%d expressions compiled with the filter off", n)
	}
}

func TestCheckClientConfigSQL92(t *testing.T) {
	b := startBroker(t, Config{StoreDir: t.TempDir(), ListenAddr: "127.0.0.1:0", CommitLogSegmentSize: 4 << 20, EnablePropertyFilter: true})
	cli := newTestClient(t)
	body := func(typ, expr string) []byte {
		c := remoting.CheckClientRequestBody{ClientID: "ip@1", Group: "g",
			SubscriptionData: remoting.SubscriptionData{Topic: "T", SubString: expr, ExpressionType: typ}}
		return c.AppendJSON(nil, remoting.JSONFastjson)
	}
	tests := []struct {
		name   string
		body   []byte
		code   int32
		remark string
	}{
		{"sql92", body(remoting.ExpressionTypeSQL92, "a > 5 AND b = 'x'"), remoting.Success, ""},
		{"sql92 trailing text ignored as by Java", body(remoting.ExpressionTypeSQL92, "a > 5 b"), remoting.Success, ""},
		{"sql92 bad", body(remoting.ExpressionTypeSQL92, "a > 'x'"), remoting.SubscriptionParseFailed, "rocketmq: invalid SQL92 expression at offset 2: value 'x' cannot be compared"},
		{"sql92 empty", body(remoting.ExpressionTypeSQL92, ""), remoting.SubscriptionParseFailed, "*"},
		{"unknown type", body("XPATH", "a"), remoting.SubscriptionParseFailed, "*"},
		{"tag", body(remoting.ExpressionTypeTag, "A || B"), remoting.Success, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := invokeBroker(t, cli, b, remoting.NewRequest(remoting.CheckClientConfig, nil, tc.body))
			if resp.Code != tc.code || (tc.remark != "*" && resp.Remark != tc.remark) {
				t.Fatalf("got %d %q, want %d %q", resp.Code, resp.Remark, tc.code, tc.remark)
			}
		})
	}
}

func TestFilterCacheBounded(t *testing.T) {
	c := newFilterCache(100 * filterKey{expr: "a > 1000"}.size())
	first, err := c.compile("g", "T", "a > 0")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.compile("g", "T", "a > 0"); again != first {
		t.Fatal("the same subscription compiled twice")
	}
	for i := range 1000 {
		if _, err := c.compile("g", "T", "a > "+strconv.Itoa(1000+i)); err != nil {
			t.Fatal(err)
		}
		// Keep the first one recent: it must survive the others.
		c.compile("g", "T", "a > 0")
	}
	if n := c.len(); n > 100 || n < 90 {
		t.Fatalf("%d entries, want at most 100 and close to it", n)
	}
	if again, _ := c.compile("g", "T", "a > 0"); again != first {
		t.Fatal("the most recently used entry was evicted")
	}
	if _, err := c.compile("g", "T", "a >"); err == nil {
		t.Fatal("a bad expression compiled")
	}
	if _, err := c.compile("g", "T", "a >"); err == nil || !strings.Contains(err.Error(), "SQL92") {
		t.Fatalf("cached error %v", err)
	}
}

// A pull held for a SQL92 subscription is answered when a message arrives.
func TestPullSQL92LongPolling(t *testing.T) {
	e := sqlEnv(t, true)
	ch := e.invokeAsync(t, pullArgs{group: "gLP", topic: "PullSQL", offset: 6, flags: remoting.PullFlagSuspend, suspendMs: 20000,
		sub: pstr("a = 7"), exprType: pstr(remoting.ExpressionTypeSQL92)}.req())
	pullWaitHeld(t, e.b, 1)
	e.putProps(t, "PullSQL", map[string]string{"a": "7"})
	r := pullWait(t, ch, 10*time.Second)
	if r.resp.Code != remoting.Success || bodyOffsets(t, r.resp) != "[6]" {
		t.Fatalf("code %d %q offsets %s, want FOUND [6]", r.resp.Code, r.resp.Remark, bodyOffsets(t, r.resp))
	}
}
