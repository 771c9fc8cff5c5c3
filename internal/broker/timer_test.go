package broker

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

func TestTimerPrepare(t *testing.T) {
	e := delayTestBroker(t, nil) // precision 100 ms
	illegal := fmt.Sprintf(remarkTimerIllegal, (3 * 24 * time.Hour).Milliseconds())
	now := time.Now().UnixMilli()
	future := (now/1000 + 60) * 1000 // a whole second a minute ahead
	tests := []struct {
		name   string
		props  []string
		code   int32
		remark string
		// want reports whether outMs is right; nil means "store normally".
		want func(now, out int64) bool
	}{
		{name: "delay ms", props: []string{"TIMER_DELAY_MS", "300"},
			want: func(now, out int64) bool { return out%100 == 0 && out > now+300-100-50 && out <= now+300+50 }},
		{name: "delay sec", props: []string{"TIMER_DELAY_SEC", "2"},
			want: func(now, out int64) bool { return out%100 == 0 && out > now+2000-100-50 && out <= now+2000+50 }},
		{name: "deliver ms exact multiple", props: []string{"TIMER_DELIVER_MS", strconv.FormatInt(future, 10)},
			want: func(_, out int64) bool { return out == future-100 }},
		{name: "deliver ms aligned down", props: []string{"TIMER_DELIVER_MS", strconv.FormatInt(future+57, 10)},
			want: func(_, out int64) bool { return out == future }},
		{name: "sec before ms before deliver", props: []string{"TIMER_DELIVER_MS", "1", "TIMER_DELAY_MS", "1", "TIMER_DELAY_SEC", "60"},
			want: func(now, out int64) bool { return out > now+60000-200 && out <= now+60000+50 }},
		{name: "ms before deliver", props: []string{"TIMER_DELIVER_MS", "1", "TIMER_DELAY_MS", "60000"},
			want: func(now, out int64) bool { return out > now+60000-200 && out <= now+60000+50 }},
		{name: "two days", props: []string{"TIMER_DELAY_SEC", strconv.Itoa(2 * 24 * 3600)},
			want: func(now, out int64) bool { return out > now+2*24*3600*1000-200 }},
		{name: "past", props: []string{"TIMER_DELIVER_MS", strconv.FormatInt(now-5000, 10)}},
		{name: "negative delay", props: []string{"TIMER_DELAY_MS", "-5"}},
		{name: "already through a timer", props: []string{"TIMER_DELAY_SEC", "10", "TIMER_OUT_MS", "123"}},
		{name: "unparsable sec", props: []string{"TIMER_DELAY_SEC", "ten"}, code: remoting.MessageIllegal, remark: illegal},
		{name: "unparsable ms", props: []string{"TIMER_DELAY_MS", "1.5"}, code: remoting.MessageIllegal, remark: illegal},
		{name: "unparsable deliver", props: []string{"TIMER_DELIVER_MS", "soon"}, code: remoting.MessageIllegal, remark: illegal},
		{name: "overflow", props: []string{"TIMER_DELAY_SEC", "9223372036854775"}, code: remoting.MessageIllegal, remark: illegal},
		{name: "beyond max", props: []string{"TIMER_DELAY_SEC", strconv.Itoa(3*24*3600 + 10)}, code: remoting.MessageIllegal, remark: illegal},
		{name: "delete in the past", props: []string{"TIMER_DELIVER_MS", "1000", "TIMER_DEL_UNIQKEY", "T+X"},
			code: remoting.MessageIllegal, remark: illegal},
		{name: "delete", props: []string{"TIMER_DELIVER_MS", strconv.FormatInt(future, 10), "TIMER_DEL_UNIQKEY", "T+X"},
			want: func(_, out int64) bool { return out == future-100 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now().UnixMilli()
			ts, resp := e.b.timerPrepare(delayProps(tt.props...))
			if tt.code != 0 {
				if resp == nil || resp.Code != tt.code || resp.Remark != tt.remark {
					t.Fatalf("response %+v, want code %d remark %q", resp, tt.code, tt.remark)
				}
				return
			}
			if resp != nil {
				t.Fatalf("response code %d %q", resp.Code, resp.Remark)
			}
			if tt.want == nil {
				if ts.outMs != 0 {
					t.Fatalf("outMs %d, want a normal message", ts.outMs)
				}
				return
			}
			if !tt.want(now, ts.outMs) {
				t.Errorf("outMs %d (now %d, +%d)", ts.outMs, now, ts.outMs-now)
			}
		})
	}

	d := delayTestBroker(t, func(c *Config) { c.DisableTimer = true })
	resp := d.send("T", 0, delayProps("TIMER_DELAY_SEC", "5"), []byte("x"))
	if resp.Code != remoting.SystemError || resp.Remark != remarkTimerDisabled {
		t.Errorf("disabled timer: code %d remark %q", resp.Code, resp.Remark)
	}
	// Delay levels still work without timers, and win over timer properties.
	d.sendOK("T", 0, delayProps("DELAY", "1", "TIMER_DELAY_SEC", "5"), []byte("x"))
	d.waitFor("T", 0, 1, 5*time.Second)
}

func TestTimerDelivery(t *testing.T) {
	e := delayTestBroker(t, nil)
	before := time.Now().UnixMilli()
	resp := e.sendOK("TimerT", 2, delayProps("TIMER_DELAY_MS", "300", "TAGS", "TT", "KEYS", "tk", "u", "v"), []byte("timer"))
	if q, _ := resp.Ext.Get("queueId"); q != "2" {
		t.Errorf("response queueId %q, want the requested 2", q)
	}
	parked := e.read(topicTimer, 0)
	if len(parked) != 1 {
		t.Fatalf("timer queue holds %d", len(parked))
	}
	p := parked[0]
	out, _ := strconv.ParseInt(p.Properties["TIMER_OUT_MS"], 10, 64)
	if p.Properties["REAL_TOPIC"] != "TimerT" || p.Properties["REAL_QID"] != "2" || out%100 != 0 ||
		out < before+300-100 || out > before+300+100 {
		t.Errorf("parked properties %v (sent at %d)", p.Properties, before)
	}
	if _, ok := e.b.topics.get(topicTimer); !ok {
		t.Errorf("%s was not created", topicTimer)
	}
	if n := e.b.store.MaxOffset("TimerT", 2); n != 0 {
		t.Fatalf("timer message delivered at once")
	}

	msgs, seen := e.waitFor("TimerT", 2, 1, 5*time.Second)
	m := msgs[0]
	if lat := seen.UnixMilli() - before; lat < 300 || m.StoreTimestamp < before+300 {
		t.Errorf("delivered %d ms after the send (stored at +%d), want at least 300", lat, m.StoreTimestamp-before)
	}
	if lat := m.StoreTimestamp - before; lat > 300+100+2000 { // 2 s of slack for a loaded machine
		t.Errorf("delivered %d ms after the send, want at most 300 + precision + slack", lat)
	}
	want := map[string]string{
		"TIMER_DELAY_MS": "300", "TAGS": "TT", "KEYS": "tk", "u": "v", "UNIQ_KEY": p.Properties["UNIQ_KEY"],
		"CLUSTER": "DefaultCluster", "TIMER_OUT_MS": p.Properties["TIMER_OUT_MS"], "WAIT": "false",
		"TIMER_ENQUEUE_MS": strconv.FormatInt(p.StoreTimestamp, 10),
	}
	for k, v := range want {
		if m.Properties[k] != v {
			t.Errorf("property %s = %q, want %q (all %v)", k, m.Properties[k], v, m.Properties)
		}
	}
	deq, err := strconv.ParseInt(m.Properties["TIMER_DEQUEUE_MS"], 10, 64)
	if err != nil || deq < out || deq > m.StoreTimestamp {
		t.Errorf("TIMER_DEQUEUE_MS %q, out %d, stored %d", m.Properties["TIMER_DEQUEUE_MS"], out, m.StoreTimestamp)
	}
	for _, k := range []string{"REAL_TOPIC", "REAL_QID"} {
		if _, ok := m.Properties[k]; ok {
			t.Errorf("delivered message keeps %s", k)
		}
	}
	if string(m.Body) != "timer" || m.Flag != 7 || m.ReconsumeTimes != 2 || m.BornTimestamp != p.BornTimestamp || m.QueueID != 2 {
		t.Errorf("delivered %+v", m)
	}
	if ent, err := e.b.store.ConsumeQueueEntry("TimerT", 2, 0); err != nil || ent.TagsCode != message.TagHash("TT") {
		t.Errorf("tags code %d (%v)", ent.TagsCode, err)
	}
	e.settle("TimerT", 2, 1, 150*time.Millisecond)
	if n := e.b.timers.pendingCount(); n != 0 {
		t.Errorf("%d timers pending after delivery", n)
	}
	e.stop(true)
	data, err := os.ReadFile(filepath.Join(e.cfg.StoreDir, "config", "timerProgress.json"))
	if err != nil || string(data) != "{\"done\":[[0,1]]}\n" {
		t.Errorf("timerProgress.json %q (%v)", data, err)
	}
}

func TestTimerPast(t *testing.T) {
	e := delayTestBroker(t, nil)
	past := strconv.FormatInt(time.Now().UnixMilli()-5000, 10)
	e.sendOK("Past", 0, delayProps("TIMER_DELIVER_MS", past), []byte("now"))
	msgs := e.read("Past", 0)
	if len(msgs) != 1 || msgs[0].Properties["TIMER_DELIVER_MS"] != past {
		t.Fatalf("past timer: %d messages %v", len(msgs), msgs)
	}
	if _, ok := msgs[0].Properties["TIMER_OUT_MS"]; ok {
		t.Errorf("past timer message got TIMER_OUT_MS")
	}
	if n := e.b.store.MaxOffset(topicTimer, 0); n != 0 {
		t.Errorf("past timer message parked")
	}
}

func TestTimerLimits(t *testing.T) {
	e := delayTestBroker(t, nil)
	e.sendOK("Far", 0, delayProps("TIMER_DELAY_SEC", strconv.Itoa(2*24*3600)), []byte("two days"))
	resp := e.send("Far", 0, delayProps("TIMER_DELIVER_MS", strconv.FormatInt(time.Now().Add(73*time.Hour).UnixMilli(), 10)), nil)
	if resp.Code != remoting.MessageIllegal {
		t.Errorf("beyond 3 days: code %d %q", resp.Code, resp.Remark)
	}
	resp = e.send("Far", 0, delayProps("TIMER_DELAY_MS", "x"), nil)
	if resp.Code != remoting.MessageIllegal {
		t.Errorf("unparsable: code %d %q", resp.Code, resp.Remark)
	}
	if n := e.b.timers.pendingCount(); n != 1 {
		t.Errorf("%d timers pending, want 1", n)
	}
	// A broker with a longer maximum takes more.
	l := delayTestBroker(t, func(c *Config) { c.TimerMaxDelay = 10 * 24 * time.Hour })
	l.sendOK("Far", 0, delayProps("TIMER_DELAY_SEC", strconv.Itoa(9*24*3600)), nil)
}

// TestTimerRestart schedules a message 1.5 s ahead and restarts the broker
// 0.3 s later, cleanly or by crashing; a second message that went out
// before the stop must not go out again.
func TestTimerRestart(t *testing.T) {
	eachStop(t, func(t *testing.T, clean bool) {
		e := delayTestBroker(t, nil)
		e.sendOK("TR", 0, delayProps("TIMER_DELAY_MS", "100", "id", "early"), []byte("early"))
		e.waitFor("TR", 0, 1, 5*time.Second)
		before := time.Now().UnixMilli()
		e.sendOK("TR", 0, delayProps("TIMER_DELAY_MS", "1500", "id", "late"), []byte("late"))
		testutil.WaitFor(t, 0, "the late timer parked", func() bool { return e.b.timers.pendingCount() == 1 })
		e.stop(clean)
		e.startWith(func(b *Broker) {
			// After a crash the delivered message is pending again (its
			// progress was not persisted) until the index shows it went
			// out; it is the one overdue.
			want, unsure := 1, 0
			if !clean {
				want, unsure = 2, 1
			}
			// On a loaded machine the restart may end after "late" was
			// due; then it may be overdue too.
			slow := time.Now().UnixMilli()-before >= 1400
			got := len(b.timers.unsure)
			if n := b.timers.pendingCount(); n != want || (got != unsure && !(slow && got == unsure+1)) {
				t.Errorf("%d timers pending (%d overdue) after the restart, want %d (%d)", n, got, want, unsure)
			}
		})
		msgs, seen := e.waitFor("TR", 0, 2, 5*time.Second)
		if lat := seen.UnixMilli() - before; lat < 1500 || msgs[1].StoreTimestamp < before+1500 {
			t.Errorf("delivered %d ms after the send, want at least 1500", lat)
		}
		msgs = e.settle("TR", 0, 2, 200*time.Millisecond)
		if msgs[0].Properties["id"] != "early" || msgs[1].Properties["id"] != "late" {
			t.Errorf("delivered %v then %v", msgs[0].Properties, msgs[1].Properties)
		}
	})
}

// TestTimerCrashOverdue crashes with delivered and undelivered timers whose
// progress was never persisted and restarts after all of them are due:
// each goes out exactly once.
func TestTimerCrashOverdue(t *testing.T) {
	e := delayTestBroker(t, nil)
	for i := range 3 {
		e.sendOK("TO", 0, delayProps("TIMER_DELAY_MS", "100", "id", strconv.Itoa(i)), []byte{byte(i)})
	}
	e.waitFor("TO", 0, 3, 5*time.Second)
	for i := 3; i < 6; i++ {
		e.sendOK("TO", 0, delayProps("TIMER_DELAY_MS", "400", "id", strconv.Itoa(i)), []byte{byte(i)})
	}
	due := time.Now().Add(400 * time.Millisecond)
	e.stop(false)
	time.Sleep(time.Until(due) + 50*time.Millisecond) // everything is overdue at the restart
	e.start()
	e.waitFor("TO", 0, 6, 5*time.Second)
	msgs := e.settle("TO", 0, 6, 200*time.Millisecond)
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m.Properties["id"]]++
	}
	for i := range 6 {
		if seen[strconv.Itoa(i)] != 1 {
			t.Errorf("message %d delivered %d times", i, seen[strconv.Itoa(i)])
		}
	}
}

func TestTimerCancel(t *testing.T) {
	e := delayTestBroker(t, nil)
	at := strconv.FormatInt(time.Now().Add(400*time.Millisecond).UnixMilli(), 10)
	uniq := "AC11000100002A9F00000000000000AA"
	e.sendOK("TC", 0, delayProps("TIMER_DELIVER_MS", at, "UNIQ_KEY", uniq, "id", "target"), []byte("target"))
	e.sendOK("TC", 0, delayProps("TIMER_DELIVER_MS", at, "id", "keep"), []byte("keep"))
	e.sendOK("TC", 0, delayProps("TIMER_DELIVER_MS", at, "TIMER_DEL_UNIQKEY", "TC+"+uniq, "id", "delete"), nil)
	e.waitFor("TC", 0, 1, 5*time.Second)
	msgs := e.settle("TC", 0, 1, 400*time.Millisecond)
	if msgs[0].Properties["id"] != "keep" {
		t.Errorf("delivered %v, want only the message that was not cancelled", msgs[0].Properties)
	}
	// The delete message survives a restart and still cancels.
	due := time.Now().Add(600 * time.Millisecond)
	at = strconv.FormatInt(due.UnixMilli(), 10)
	uniq2 := "AC11000100002A9F00000000000000BB"
	e.sendOK("TC", 0, delayProps("TIMER_DELIVER_MS", at, "UNIQ_KEY", uniq2, "id", "target2"), nil)
	e.sendOK("TC", 0, delayProps("TIMER_DELIVER_MS", at, "TIMER_DEL_UNIQKEY", uniq2), nil)
	e.restart(false)
	// Waiting is the assertion: past its time, target2 is still not delivered.
	e.settle("TC", 0, 1, time.Until(due)+300*time.Millisecond)
}

// TestTimerManyPending parks 5,000 timer messages: the broker keeps 16
// bytes each, rebuilds them after a restart and a crash.
func TestTimerManyPending(t *testing.T) {
	const n = 5000
	e := delayTestBroker(t, nil)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				resp := e.send("Many", int32(i%4), delayProps("TIMER_DELAY_SEC", strconv.Itoa(3600+i%600)), []byte("m"))
				if resp.Code != remoting.Success {
					errs <- fmt.Sprintf("send %d: code %d %q", i, resp.Code, resp.Remark)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		tm := e.b.timers
		tm.mu.Lock()
		pending, capacity, done := len(tm.pending), cap(tm.pending), len(tm.done)
		tm.mu.Unlock()
		if pending != n {
			t.Fatalf("%s: %d pending, want %d", when, pending, n)
		}
		if bytes := capacity * int(unsafe.Sizeof(timerEntry{})); unsafe.Sizeof(timerEntry{}) != 16 || bytes > 4*16*n {
			t.Errorf("%s: pending timers take %d bytes", when, bytes)
		}
		if done != 0 || len(tm.cancels) != 0 || len(tm.delKeys) != 0 {
			t.Errorf("%s: done %d ranges, %d cancels", when, done, len(tm.cancels))
		}
	}
	check("after the sends")
	start := time.Now()
	e.restart(true)
	t.Logf("restart with %d pending timers took %v", n, time.Since(start))
	check("after a restart")
	e.restart(false)
	check("after a crash")
	if len(e.b.timers.unsure) != 0 {
		t.Errorf("%d timers not yet due counted as maybe delivered", len(e.b.timers.unsure))
	}
}

func TestOffsetRanges(t *testing.T) {
	const n = 500
	var r offsetRanges
	in := map[int64]bool{}
	perm := rand.Perm(n)
	for i, x := range perm[:n*3/4] {
		r.add(int64(x))
		in[int64(x)] = true
		if i%50 == 0 || i == n*3/4-1 {
			for y := int64(-1); y <= n; y++ {
				if r.contains(y) != in[y] {
					t.Fatalf("after %d adds: contains(%d) = %v", i+1, y, r.contains(y))
				}
				g := r.nextGap(y)
				if g < y || in[g] {
					t.Fatalf("nextGap(%d) = %d", y, g)
				}
				for z := y; z < g; z++ {
					if !in[z] {
						t.Fatalf("nextGap(%d) = %d skips %d", y, g, z)
					}
				}
			}
			for j := 1; j < len(r); j++ {
				if r[j].from <= r[j-1].to || r[j].from >= r[j].to {
					t.Fatalf("ranges not disjoint and merged: %v", r)
				}
			}
		}
	}
	again, err := parseOffsetRanges(r.appendJSON(nil))
	if err != nil || len(again) != len(r) {
		t.Fatalf("round trip: %v, %d ranges of %d", err, len(again), len(r))
	}
	for i := range r {
		if again[i] != r[i] {
			t.Fatalf("round trip range %d: %v != %v", i, again[i], r[i])
		}
	}
	r.trimFrom(n / 2)
	for y := int64(0); y < n; y++ {
		if want := in[y] && y < n/2; r.contains(y) != want {
			t.Fatalf("after trimFrom: contains(%d) = %v", y, r.contains(y))
		}
	}
	for _, bad := range []string{`{"done":[[5,3]]}`, `{"done":[[0,5],[4,9]]}`, `{"done":[[-1,2]]}`, `{"done":`} {
		if _, err := parseOffsetRanges([]byte(bad)); err == nil {
			t.Errorf("parseOffsetRanges(%s) accepted", bad)
		}
	}
}

func TestRecordProperties(t *testing.T) {
	for _, topic := range []string{"short", string(make([]byte, 200))} {
		f := message.RecordFields{Topic: topic, Body: []byte("body"), Properties: "a\x01b\x02TIMER_OUT_MS\x011000",
			BornHost: netip.MustParseAddrPort("[2001:db8::1]:5"), StoreHost: netip.MustParseAddrPort("10.0.0.1:10911")}
		rec, _, err := f.AppendRecord(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := recordProperties(rec)
		if err != nil || got != f.Properties {
			t.Errorf("topic length %d: %q, %v", len(topic), got, err)
		}
		for cut := 0; cut < len(rec); cut += 7 {
			if _, err := recordProperties(rec[:cut]); err == nil {
				t.Errorf("record cut at %d of %d decoded", cut, len(rec))
			}
		}
	}
}
