package java

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestMqadminAgainstRmqadmin: for the same commands against the same
// broker, the values rmqadmin prints equal those of Java's mqadmin 4.9.8
// (columns compared by value, not layout).
func TestMqadminAgainstRmqadmin(t *testing.T) {
	j := javaClients(t)
	c := rmqtest.StartCluster(t)
	ns := c.NameServerAddr()
	ctx := ctxT(t)
	const topic, group, key = "CmdT", "CmdG", "cmdKey"
	if err := rmqtest.CreateTopic(ctx, ns, topic, 4); err != nil {
		t.Fatal(err)
	}
	p := goProducer(ctx, t, ns)
	var keyed []string
	for i := range 6 {
		m, _ := producer.NewMessage(topic, []byte("cmd-"+strconv.Itoa(i)), producer.Keys(key))
		r, err := p.Send(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		keyed = append(keyed, r.MsgID)
	}
	adm, err := admin.New(admin.WithNameServers(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close(context.Background()) })
	stats, err := adm.TopicStats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := consumer.NewPull(consumer.WithGroup(group), consumer.WithNameServers(ns), consumer.WithAutoCommit(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Assign(ctx, slices.Collect(maps.Keys(stats))); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	commit := map[rocketmq.MessageQueue]int64{}
	for mq, o := range stats {
		commit[mq] = o.MaxOffset / 2
	}
	if err := pc.Commit(ctx, commit); err != nil {
		t.Fatal(err)
	}
	if err := pc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	brokerAddr := c.BrokerAddr("broker-a")

	bin := filepath.Join(t.TempDir(), "rmqadmin")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/go-rocketmq/rocketmq/cmd/rmqadmin").CombinedOutput(); err != nil {
		t.Fatalf("go build rmqadmin: %v\n%s", err, out)
	}
	// mqadmin reads its logging setup from $ROCKETMQ_HOME/conf.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	logback, err := os.ReadFile("logback.xml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "conf", "logback_tools.xml"), logback, 0o644); err != nil {
		t.Fatal(err)
	}
	ours := func(args ...string) string {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		out, err := exec.CommandContext(cctx, bin, append([]string{"-n", ns}, args...)...).Output()
		if err != nil {
			t.Fatalf("rmqadmin %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	java := func(args ...string) string {
		t.Helper()
		out, err := j.tool(t, home, append(args, "-n", ns)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	cases := []struct {
		name string
		args []string
		// rows picks the compared values out of an output
		rows func(out string) []string
	}{
		{"clusterList", []string{"clusterList"}, columns("#Cluster", 0, 1, 2, 3, 4)},
		{"topicList", []string{"topicList"}, lines},
		{"topicStatus", []string{"topicStatus", "-t", topic}, columns("#Broker", 0, 1, 2, 3)},
		{"consumerProgress", []string{"consumerProgress", "-g", group}, func(out string) []string {
			// Topic, broker, queue, broker offset, consumer offset; the diff total.
			rows := columns("#Topic", 0, 1, 2, 3, 4)(out)
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) == 3 && f[0] == "Diff" && f[1] == "Total:" {
					rows = append(rows, "diff "+f[2])
				}
			}
			return rows
		}},
		{"getBrokerConfig", []string{"getBrokerConfig", "-b", brokerAddr}, keyValues("=")},
		{"brokerStatus keys", []string{"brokerStatus", "-b", brokerAddr}, keysOnly(":")},
		{"queryMsgByKey ids", []string{"queryMsgByKey", "-t", topic, "-k", key}, msgIDs(keyed)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, jv := ours(tc.args...), java(tc.args...)
			got, want := tc.rows(o), tc.rows(jv)
			slices.Sort(got)
			slices.Sort(want)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("rmqadmin %v:\n%s\nvalues %q\nmqadmin:\n%s\nvalues %q", tc.args, o, got, jv, want)
			}
			t.Logf("%d values equal, e.g. %q", len(want), want[:min(2, len(want))])
		})
	}
}

// tool runs Java's mqadmin (MQAdminStartup) and returns its stdout.
func (j *javaRunner) tool(t *testing.T, home string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	jargs := append([]string{}, jdkFlags...)
	jargs = append(jargs, "-Xmx256m", "-Duser.home="+t.TempDir(), "-Drocketmq.home.dir="+home,
		"-cp", filepath.Join(j.lib, "*"), "org.apache.rocketmq.tools.command.MQAdminStartup")
	cmd := exec.CommandContext(ctx, "java", append(jargs, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", &toolError{args, err, string(out) + stderr.String()}
	}
	return string(out), nil
}

type toolError struct {
	args []string
	err  error
	out  string
}

func (e *toolError) Error() string {
	return "mqadmin " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + tail(e.out, 4000)
}

// columns picks fields of the table rows after the header line starting
// with head.
func columns(head string, idx ...int) func(string) []string {
	return func(out string) []string {
		var rows []string
		in := false
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) == 0 {
				in = false
				continue
			}
			if f[0] == head {
				in = true
				continue
			}
			if !in || len(f) <= slices.Max(idx) {
				continue
			}
			var pick []string
			for _, i := range idx {
				pick = append(pick, f[i])
			}
			rows = append(rows, strings.Join(pick, " "))
		}
		return rows
	}
}

func lines(out string) []string {
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			rows = append(rows, l)
		}
	}
	return rows
}

// keyValues reads "key sep value" lines.
func keyValues(sep string) func(string) []string {
	return func(out string) []string {
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			k, v, ok := strings.Cut(l, sep)
			if ok && !strings.HasPrefix(strings.TrimSpace(l), "=") {
				rows = append(rows, strings.TrimSpace(k)+"="+strings.TrimSpace(v))
			}
		}
		return rows
	}
}

// keysOnly reads the keys of "key sep value" lines (values that change
// between two runs, such as counters, are left out).
func keysOnly(sep string) func(string) []string {
	return func(out string) []string {
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if k, _, ok := strings.Cut(l, sep); ok {
				rows = append(rows, strings.TrimSpace(k))
			}
		}
		return rows
	}
}

// msgIDs reads which of ids an output names.
func msgIDs(ids []string) func(string) []string {
	return func(out string) []string {
		var rows []string
		for _, id := range ids {
			if strings.Contains(out, id) {
				rows = append(rows, id)
			}
		}
		return rows
	}
}
