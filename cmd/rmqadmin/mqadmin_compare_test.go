package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
)

// TestCompareMQAdmin runs Java's mqadmin and rmqadmin against the same
// broker and compares the values they print (fields, not layout). It needs
// a Java RocketMQ build: RMQ_LIB (the folder of its jars), ROCKETMQ_HOME
// (its conf/logback_tools.xml) and ROCKETMQ_NAMESRV.
func TestCompareMQAdmin(t *testing.T) {
	lib, home := os.Getenv("RMQ_LIB"), os.Getenv("ROCKETMQ_HOME")
	if lib == "" || home == "" || os.Getenv(envExternal) == "" {
		t.Skipf("needs RMQ_LIB, ROCKETMQ_HOME (a Java RocketMQ build) and %s (the cluster both tools ask)", envExternal)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skipf("no java: %v", err)
	}
	e := start(t)
	j := &javaAdmin{lib: lib, home: home, userHome: t.TempDir(), ns: e.ns}
	topic := name(t, "CMP")

	t.Run("clusterList", func(t *testing.T) {
		cols := func(out string) []string { return rowCols(out, 0, 1, 2, 3, 4) }
		same(t, cols(j.run(t, "clusterList")), cols(e.ok(t, "clusterList").stdout))
	})
	t.Run("updateTopic", func(t *testing.T) {
		args := []string{"updateTopic", "-b", e.brokerAddr, "-t", topic, "-r", "4", "-w", "4", "-p", "6"}
		jv := javaBracket(j.run(t, args...), "TopicConfig")
		// Java runs second: both print the same update of the topic.
		rv := kvs(e.ok(t, args...).stdout, ":")
		same(t, []string{jv["topicName"], jv["readQueueNums"], jv["writeQueueNums"], permNumber(jv["perm"]), jv["order"]},
			[]string{rv["Topic"], rv["Read Queues"], rv["Write Queues"], rv["Perm"], rv["Order"]})
	})
	e.waitRoute(t, topic, 4)
	t.Run("topicRoute", func(t *testing.T) {
		jr := j.run(t, "topicRoute", "-t", topic)
		r := e.ok(t, "topicRoute", "-t", topic).stdout
		// Java prints the route as fastjson; the table holds the same
		// brokers and queue data.
		for _, row := range tableRows(r) {
			for _, cell := range row {
				if !strings.Contains(jr, cell) && !strings.Contains(jr, `"`+cell+`"`) {
					t.Errorf("rmqadmin's %q is not in mqadmin's route:\n%s", cell, jr)
				}
			}
		}
		for _, k := range []string{"readQueueNums", "writeQueueNums", "perm", "topicSysFlag"} {
			if m := regexp.MustCompile(`"` + k + `":(\d+)`).FindStringSubmatch(jr); m == nil || !strings.Contains(r, " "+m[1]) {
				t.Errorf("mqadmin's %s %v not in rmqadmin's route:\n%s", k, m, r)
			}
		}
	})

	p, err := producer.New(producer.WithGroup(name(t, "CMPpg")), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	var offsetID string
	for i := range 6 {
		m, err := producer.NewMessage(topic, []byte(fmt.Sprintf("body-%d", i)), producer.Keys("cmpkey"), producer.Tag("tg"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Send(ctxT(t), m)
		if err != nil {
			t.Fatal(err)
		}
		offsetID = res.OffsetMsgID
	}
	testutil.WaitFor(t, wait, "the sends dispatched", func() bool {
		st, err := e.adm.TopicStats(ctxT(t), topic)
		var n int64
		for _, s := range st {
			n += s.MaxOffset
		}
		return err == nil && n == 6
	})

	t.Run("topicStatus", func(t *testing.T) {
		cols := func(out string) []string { return rowCols(out, 0, 1, 2, 3, 4) }
		same(t, cols(j.run(t, "topicStatus", "-t", topic)), cols(e.ok(t, "topicStatus", "-t", topic).stdout))
	})
	t.Run("queryMsgByKey", func(t *testing.T) {
		// Java: id, queue, offset; rmqadmin: id, offset id, broker, queue,
		// offset, time.
		same(t, rowCols(j.run(t, "queryMsgByKey", "-t", topic, "-k", "cmpkey"), 0, 1, 2),
			rowCols(e.ok(t, "queryMsgByKey", "-t", topic, "-k", "cmpkey").stdout, 0, 3, 4))
	})
	t.Run("queryMsgById", func(t *testing.T) {
		jv := kvs(j.run(t, "queryMsgById", "-i", offsetID), ":")
		rv := kvs(e.ok(t, "queryMsgById", "-i", offsetID).stdout, ":")
		for _, k := range []string{"OffsetID", "Topic", "Tags", "Keys", "Queue ID", "Queue Offset", "CommitLog Offset",
			"Reconsume Times", "Born Timestamp", "Store Timestamp", "Born Host", "Store Host", "System Flag"} {
			if jv[k] == "" || jv[k] != rv[k] {
				t.Errorf("%s: mqadmin %q, rmqadmin %q", k, jv[k], rv[k])
			}
		}
		if jp, rp := propSet(jv["Properties"]), propSet(rv["Properties"]); !slices.Equal(jp, rp) {
			t.Errorf("Properties: mqadmin %v, rmqadmin %v", jp, rp)
		}
	})
	t.Run("producerConnection", func(t *testing.T) {
		args := []string{"producerConnection", "-g", p.Group(), "-t", topic}
		// Java: #n clientId addr language version; rmqadmin without #n.
		same(t, rowCols(j.run(t, args...), 1, 2, 3, 4), rowCols(e.ok(t, args...).stdout, 0, 1, 2, 3))
	})

	// A lite pull member of a group, past every message and committed.
	g := name(t, "CMPcg")
	pc, err := consumer.NewPull(consumer.WithGroup(g), consumer.WithNameServers(e.ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.Tags("*")); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Shutdown(context.Background()) })
	for n := 0; n < 6; {
		msgs, err := pc.Poll(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		n += len(msgs)
	}
	if err := pc.CommitSync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "the group committed", func() bool {
		cs, err := e.adm.ConsumeStats(ctxT(t), g, topic)
		return err == nil && cs.Lag() == 0 && len(cs.Queues) == 4
	})

	t.Run("consumerConnection", func(t *testing.T) {
		jo, ro := j.run(t, "consumerConnection", "-g", g), e.ok(t, "consumerConnection", "-g", g).stdout
		same(t, rowCols(firstBlock(jo), 0, 1, 2, 3), rowCols(firstBlock(ro), 0, 1, 2, 3))
		same(t, rowCols(subBlock(jo), 0, 1), rowCols(subBlock(ro), 0, 1))
		jv, rv := kvs(jo, ":"), kvs(ro, ":")
		for _, k := range []string{"ConsumeType", "MessageModel", "ConsumeFromWhere"} {
			if jv[k] == "" || jv[k] != rv[k] {
				t.Errorf("%s: mqadmin %q, rmqadmin %q", k, jv[k], rv[k])
			}
		}
	})
	t.Run("consumerProgress", func(t *testing.T) {
		jo, ro := j.run(t, "consumerProgress", "-g", g), e.ok(t, "consumerProgress", "-g", g).stdout
		same(t, rowCols(jo, 0, 1, 2, 3, 4, 5), rowCols(ro, 0, 1, 2, 3, 4, 5))
		if jv, rv := kvs(jo, ":"), kvs(ro, ":"); jv["Diff Total"] != rv["Diff Total"] {
			t.Errorf("Diff Total: mqadmin %q, rmqadmin %q", jv["Diff Total"], rv["Diff Total"])
		}
	})
	t.Run("resetOffsetByTime", func(t *testing.T) {
		for _, ts := range []string{"0", "now"} {
			// Java: broker, queue, offset (a live group); rmqadmin the same.
			jo := j.run(t, "resetOffsetByTime", "-g", g, "-t", topic, "-s", ts)
			ro := e.ok(t, "resetOffsetByTime", "-g", g, "-t", topic, "-s", ts).stdout
			same(t, rowCols(jo, 0, 1, 2), rowCols(ro, 0, 1, 2))
		}
	})
	t.Run("updateSubGroup", func(t *testing.T) {
		sg := name(t, "CMPsg")
		args := []string{"updateSubGroup", "-b", e.brokerAddr, "-g", sg, "-r", "5"}
		jv := javaBracket(j.run(t, args...), "SubscriptionGroupConfig")
		rv := kvs(e.ok(t, args...).stdout, ":")
		same(t, []string{jv["groupName"], jv["consumeEnable"], jv["consumeFromMinEnable"], jv["consumeBroadcastEnable"], jv["retryQueueNums"],
			jv["retryMaxTimes"], jv["brokerId"], jv["whichBrokerWhenConsumeSlowly"], jv["notifyConsumerIdsChangedEnable"]},
			[]string{rv["Group"], rv["Consume Enable"], rv["Consume From Min Enable"], rv["Consume Broadcast Enable"], rv["Retry Queue Nums"],
				rv["Retry Max Times"], rv["Broker Id"], rv["Which Broker When Consume Slowly"], rv["Notify Consumer Ids Changed Enable"]})
	})
	t.Run("deleteSubGroup", func(t *testing.T) {
		for i, tool := range []func(args ...string) string{
			func(args ...string) string { return j.run(t, args...) },
			func(args ...string) string { return e.ok(t, args...).stdout },
		} {
			sg := name(t, "CMPdg"+strconv.Itoa(i))
			e.ok(t, "updateSubGroup", "-b", e.brokerAddr, "-g", sg)
			out := tool("deleteSubGroup", "-b", e.brokerAddr, "-g", sg)
			if !strings.Contains(out, "delete subscription group ["+sg+"]") || !strings.Contains(out, e.brokerAddr) || !strings.Contains(out, "success.") {
				t.Errorf("deleteSubGroup %s:\n%s", sg, out)
			}
			groups, err := e.adm.Groups(ctxT(t), e.brokerAddr)
			if _, ok := groups[sg]; err != nil || ok {
				t.Errorf("after deleteSubGroup %s the broker still has it (%v)", sg, err)
			}
		}
	})
	t.Run("deleteTopic", func(t *testing.T) {
		var outs []string
		for i, tool := range []func(args ...string) string{
			func(args ...string) string { return j.run(t, args...) },
			func(args ...string) string { return e.ok(t, args...).stdout },
		} {
			dt := name(t, "CMPdt"+strconv.Itoa(i))
			e.ok(t, "updateTopic", "-b", e.brokerAddr, "-t", dt)
			e.waitRoute(t, dt, 8)
			out := tool("deleteTopic", "-c", e.cluster, "-t", dt)
			outs = append(outs, strings.SplitN(strings.ReplaceAll(out, dt, "T"), "\n", 2)[0])
			if _, err := e.adm.TopicRoute(ctxT(t), dt); err == nil {
				t.Errorf("after deleteTopic %s the NameServer still routes it", dt)
			}
		}
		same(t, outs[:1], outs[1:])
	})
	t.Run("topicList", func(t *testing.T) {
		before := lines(e.ok(t, "topicList").stdout)
		jl := lines(j.run(t, "topicList"))
		after := lines(e.ok(t, "topicList").stdout)
		// Other clients may create or delete topics meanwhile: mqadmin's
		// list lies between what rmqadmin saw before and after.
		for _, tp := range jl {
			if !slices.Contains(before, tp) && !slices.Contains(after, tp) {
				t.Errorf("mqadmin lists %s, rmqadmin does not", tp)
			}
		}
		for _, tp := range before {
			if slices.Contains(after, tp) && !slices.Contains(jl, tp) {
				t.Errorf("rmqadmin lists %s, mqadmin does not", tp)
			}
		}
		if !slices.Contains(jl, topic) {
			t.Errorf("mqadmin's list lacks %s", topic)
		}
	})
	t.Run("brokerStatus", func(t *testing.T) {
		jv := kvs(j.run(t, "brokerStatus", "-b", e.brokerAddr), ":")
		rv := kvs(e.ok(t, "brokerStatus", "-b", e.brokerAddr).stdout, ":")
		same(t, slices.Sorted(maps.Keys(jv)), slices.Sorted(maps.Keys(rv)))
		for _, k := range []string{"bootTimestamp", "brokerVersion", "brokerVersionDesc", "commitLogMinOffset"} {
			if jv[k] != rv[k] {
				t.Errorf("%s: mqadmin %q, rmqadmin %q", k, jv[k], rv[k])
			}
		}
	})
	t.Run("getBrokerConfig and updateBrokerConfig", func(t *testing.T) {
		// An hour more of commit log kept, for a moment: harmless.
		const key = "fileReservedTime"
		orig := kvs(e.ok(t, "getBrokerConfig", "-b", e.brokerAddr).stdout, "=")[key]
		hours, err := strconv.Atoi(orig)
		if err != nil {
			t.Fatalf("%s in the broker's config: %q", key, orig)
		}
		next := strconv.Itoa(hours + 1)
		ro := e.ok(t, "updateBrokerConfig", "-b", e.brokerAddr, "-k", key, "-v", next).stdout
		jc := kvs(j.run(t, "getBrokerConfig", "-b", e.brokerAddr), "=")
		if jc[key] != next {
			t.Errorf("after rmqadmin updateBrokerConfig %s=%s mqadmin reads %q", key, next, jc[key])
		}
		jo := j.run(t, "updateBrokerConfig", "-b", e.brokerAddr, "-k", key, "-v", orig)
		same(t, lines(jo), lines(ro))
		rc := kvs(e.ok(t, "getBrokerConfig", "-b", e.brokerAddr).stdout, "=")
		if rc[key] != orig {
			t.Errorf("after mqadmin updateBrokerConfig %s=%s rmqadmin reads %q", key, orig, rc[key])
		}
		same(t, slices.Sorted(maps.Keys(jc)), slices.Sorted(maps.Keys(rc)))
		for k, v := range rc {
			if k != key && jc[k] != v {
				t.Errorf("%s: mqadmin %q, rmqadmin %q", k, jc[k], v)
			}
		}
	})
}

// javaAdmin runs Java's mqadmin.
type javaAdmin struct{ lib, home, userHome, ns string }

// run runs mqadmin args -n ns and returns its standard output. A call that
// fails (a JVM on a loaded machine can miss the 3 s default timeout) is
// tried again, up to three times.
func (j *javaAdmin) run(t *testing.T, args ...string) string {
	t.Helper()
	var out []byte
	var err error
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
		cmd := exec.CommandContext(ctx, "java", "-Xms64m", "-Xmx256m",
			"--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
			"--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
			"-Duser.home="+j.userHome, "-Drocketmq.home.dir="+j.home, "-Drocketmq.client.logRoot="+j.userHome,
			"-cp", filepath.Join(j.lib, "*"), "org.apache.rocketmq.tools.command.MQAdminStartup")
		cmd.Args = append(cmd.Args, args...)
		cmd.Args = append(cmd.Args, "-n", j.ns)
		cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+j.home)
		cmd.Dir = j.userHome
		out, err = cmd.Output()
		cancel()
		if err == nil && !strings.Contains(string(out), "Exception") {
			return string(out)
		}
	}
	t.Fatalf("mqadmin %s: %v\n%s", strings.Join(args, " "), err, out)
	return ""
}

// tableRows are the fields of each line of a table, but for headers
// (#...) and blank lines.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		// Java's resetOffsetByTime starts with a "rollback ..." sentence.
		if len(f) == 0 || strings.HasPrefix(f[0], "#") && !isCounter(f[0]) || strings.HasSuffix(f[0], ":") || f[0] == "rollback" {
			continue
		}
		rows = append(rows, f)
	}
	return rows
}

// isCounter reports whether f is Java's row counter (#001).
func isCounter(f string) bool {
	_, err := strconv.Atoi(strings.TrimPrefix(f, "#"))
	return strings.HasPrefix(f, "#") && err == nil
}

// rowCols returns the given columns of every table row with them all,
// joined and sorted.
func rowCols(out string, cols ...int) []string {
	var res []string
	for _, f := range tableRows(out) {
		if len(f) <= slices.Max(cols) {
			continue
		}
		var cells []string
		for _, c := range cols {
			cells = append(cells, f[c])
		}
		res = append(res, strings.Join(cells, " "))
	}
	slices.Sort(res)
	return res
}

// kvs reads "key sep value" lines.
func kvs(out, sep string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(l, sep)
		if ok && strings.TrimSpace(k) != "" {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// javaBracket reads Java's toString "Name [k=v, k=v]".
func javaBracket(out, name string) map[string]string {
	m := map[string]string{}
	i := strings.Index(out, name+" [")
	if i < 0 {
		return m
	}
	body, _, _ := strings.Cut(out[i+len(name)+2:], "]")
	for _, kv := range strings.Split(body, ", ") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// permNumber turns Java's "RW-" into its number.
func permNumber(s string) string {
	n := 0
	for i, bit := range []int{4, 2, 1} {
		if i < len(s) && s[i] != '-' {
			n |= bit
		}
	}
	return strconv.Itoa(n)
}

// propSet is a "{k=v, k=v}" map as sorted k=v.
func propSet(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	out := strings.Split(s, ", ")
	slices.Sort(out)
	return out
}

// firstBlock is out up to its first blank line or the subscription part.
func firstBlock(out string) string {
	if i := strings.Index(out, "Below is subscription"); i >= 0 {
		out = out[:i]
	}
	if i := strings.Index(out, "\n\n"); i >= 0 {
		out = out[:i]
	}
	return out
}

// subBlock is the subscription part of a consumerConnection output.
func subBlock(out string) string {
	_, out, _ = strings.Cut(out, "Below is subscription:")
	out, _, _ = strings.Cut(strings.TrimLeft(out, "\n"), "\n\n")
	return out
}

func lines(out string) []string {
	var res []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			res = append(res, l)
		}
	}
	slices.Sort(res)
	return res
}

// same fails t unless mqadmin's values equal rmqadmin's.
func same(t *testing.T, java, ours []string) {
	t.Helper()
	if len(java) == 0 || !slices.Equal(java, ours) {
		t.Errorf("values differ:\nmqadmin:  %q\nrmqadmin: %q", java, ours)
	}
}
