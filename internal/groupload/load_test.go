package groupload

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

const (
	envLoad     = "ROCKETMQ_GROUPLOAD"
	envExternal = "ROCKETMQ_NAMESRV"
	healthEvery = 250 * time.Millisecond
	healthLimit = 3 * time.Second // a health check's deadline
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildBinary builds cmd/rocketmq-local once per test binary.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "rocketmq-groupload-bin")
		if buildErr != nil {
			return
		}
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		binPath = filepath.Join(buildDir, "rocketmq-local")
		out, err := exec.Command(gobin, "build", "-o", binPath, "github.com/go-rocketmq/rocketmq/cmd/rocketmq-local").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// startBroker runs rocketmq-local on fresh loopback ports and returns its
// process and the broker's address.
func startBroker(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), "-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0",
		"-data", t.TempDir(), "-console", "off", "-segment-size", strconv.Itoa(64<<20))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if f := os.Getenv("ROCKETMQ_GROUPLOAD_GCTRACE"); f != "" {
		// The broker's GC trace, to see live heap against RSS.
		w, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
		cmd.Stderr = w
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	addrs := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 4 && f[0] == "broker-a" && f[1] == "listening" {
				addrs <- f[3]
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case a := <-addrs:
		return cmd, a
	case <-done:
		t.Fatal("rocketmq-local ended before listening")
	case <-time.After(60 * time.Second):
		t.Fatal("rocketmq-local did not announce its broker")
	}
	return nil, ""
}

// memory is what /proc says of a process, in bytes.
type memory struct{ rss, anon, peak int64 }

func procMemory(pid int) (memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	var m memory
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb << 10
		case "RssAnon:":
			m.anon = kb << 10
		case "VmHWM:":
			m.peak = kb << 10
		}
	}
	return m, nil
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// client is one raw connection that heartbeats and reads whatever the
// broker sends (heartbeat answers, NOTIFY_CONSUMER_IDS_CHANGED pushes).
type client struct {
	nc      net.Conn
	frames  atomic.Int64
	replies chan *remoting.Command
	done    chan struct{}
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{nc: nc, replies: make(chan *remoting.Command, 16), done: make(chan struct{})}
	go c.read()
	t.Cleanup(func() {
		nc.Close()
		<-c.done
	})
	return c
}

// read reads frames until the connection ends, handing on responses and
// counting the rest without decoding them.
func (c *client) read() {
	defer close(c.done)
	r := bufio.NewReaderSize(c.nc, 256<<10)
	var prefix [4]byte
	var frame []byte
	for {
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(prefix[:]))
		if n < 8 || n > remoting.DefaultMaxFrameSize {
			return
		}
		frame = append(frame[:0], prefix[:]...)
		frame = append(frame, make([]byte, n)...)
		if _, err := io.ReadFull(r, frame[4:]); err != nil {
			return
		}
		c.frames.Add(1)
		cmd, _, err := remoting.DecodeFrame(frame, remoting.DefaultMaxFrameSize)
		if err != nil || !cmd.IsResponse() {
			continue
		}
		select {
		case c.replies <- cmd:
		default:
		}
	}
}

// call writes req and waits for a response.
func (c *client) call(req *remoting.Command, wait time.Duration) (*remoting.Command, error) {
	frame, err := req.AppendFrame(nil)
	if err != nil {
		return nil, err
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(wait))
	if _, err := c.nc.Write(frame); err != nil {
		return nil, err
	}
	select {
	case resp := <-c.replies:
		return resp, nil
	case <-c.done:
		return nil, io.EOF
	case <-time.After(wait):
		return nil, fmt.Errorf("no answer in %v", wait)
	}
}

// heartbeat is the HEART_BEAT body of clientID as a member of groups
// Group00000 up to n-1, each subscribed to one shared topic.
func heartbeat(clientID string, n int) []byte {
	hb := remoting.HeartbeatData{ClientID: clientID}
	hb.ConsumerDataSet = make([]remoting.ConsumerData, n)
	for i := range n {
		hb.ConsumerDataSet[i] = remoting.ConsumerData{
			GroupName:        fmt.Sprintf("Group%05d", i),
			ConsumeType:      remoting.ConsumeTypePassively,
			MessageModel:     remoting.MessageModelClustering,
			ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
			SubscriptionDataSet: []remoting.SubscriptionData{{
				Topic: "GroupLoadTopic", SubString: "*", SubVersion: 1, ExpressionType: remoting.ExpressionTypeTag,
			}},
		}
	}
	return hb.AppendJSON(nil, remoting.JSONStandard)
}

// health asks the broker for its runtime info every healthEvery over its
// own connection until ctx ends, and reports the slowest answer and the
// checks that got none within healthLimit.
func health(ctx context.Context, t *testing.T, addr string) (slowest func() (time.Duration, int)) {
	c := dial(t, addr)
	var mu sync.Mutex
	var worst time.Duration
	missed := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(healthEvery)
		defer tick.Stop()
		for opaque := int32(1); ; opaque++ {
			req := remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil)
			req.Opaque = opaque
			start := time.Now()
			resp, err := c.call(req, healthLimit)
			d := time.Since(start)
			mu.Lock()
			worst = max(worst, d)
			if err != nil || resp.Code != remoting.Success {
				missed++
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() (time.Duration, int) {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return worst, missed
	}
}

// loadSize is the run's clients and groups per client.
func loadSize(t *testing.T) (clients, groups int, heavy bool) {
	s := os.Getenv(envLoad)
	if s == "" {
		return 3, 2000, false
	}
	a, b, ok := strings.Cut(s, "x")
	clients, err1 := strconv.Atoi(a)
	groups, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || clients < 1 || groups < 1 {
		t.Fatalf("%s=%q: want CLIENTSxGROUPS, e.g. 21x50000", envLoad, s)
	}
	return clients, groups, true
}

// TestManyGroupsMemory: one client creates the groups and leaves (the
// starting figure is taken then), then clients heartbeat the same groups
// twice each, all at once, and disconnect. The broker's resident memory is
// sampled every 50 ms; it must stay at most 1 GiB (heavy run), come back
// under twice the starting figure within 60 s of the disconnects, and
// every health check must be answered within 3 s throughout.
func TestManyGroupsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rocketmq-local")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the broker's memory from /proc")
	}
	if os.Getenv(envExternal) != "" {
		t.Skip("measures a rocketmq-local process of its own")
	}
	clients, groups, heavy := loadSize(t)
	cmd, addr := startBroker(t)
	pid := cmd.Process.Pid

	// Let start-up settle: the cold figure. Then one client creates the
	// groups and leaves: the groups' configs and retry topics stay, as in
	// Java, and the figure after that is the starting one.
	time.Sleep(2 * time.Second)
	cold, err := procMemory(pid)
	if err != nil {
		t.Fatal(err)
	}
	warm := dial(t, addr)
	req := remoting.NewRequest(remoting.HeartBeat, nil, heartbeat("127.0.0.1@load-warm", groups))
	req.Opaque = 1
	if resp, err := warm.call(req, 120*time.Second); err != nil || resp.Code != remoting.Success {
		t.Fatalf("warm-up heartbeat: %v %v", resp, err)
	}
	warm.nc.Close()
	time.Sleep(5 * time.Second)
	start, _ := procMemory(pid)

	var peak atomic.Int64
	sampleCtx, stopSampling := context.WithCancel(context.Background())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if m, err := procMemory(pid); err == nil && m.rss > peak.Load() {
				peak.Store(m.rss)
			}
			select {
			case <-sampleCtx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	defer stopSampling()
	hctx, stopHealth := context.WithCancel(context.Background())
	defer stopHealth()
	slowest := health(hctx, t, addr)

	conns := make([]*client, clients)
	for i := range conns {
		conns[i] = dial(t, addr)
	}
	began := time.Now()
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := heartbeat(fmt.Sprintf("127.0.0.1@load-%d", i), groups)
			for round := range 2 {
				req := remoting.NewRequest(remoting.HeartBeat, nil, body)
				req.Opaque = int32(round + 1)
				resp, err := c.call(req, 120*time.Second)
				if err == nil && resp.Code != remoting.Success {
					err = fmt.Errorf("code %d %s", resp.Code, resp.Remark)
				}
				if err != nil {
					errs <- fmt.Errorf("client %d heartbeat %d: %w", i, round, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	registered := time.Since(began)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	loaded, _ := procMemory(pid)
	notifies := int64(0)
	for _, c := range conns {
		notifies += c.frames.Load()
	}

	closedAt := time.Now()
	for _, c := range conns {
		c.nc.Close()
	}
	// Back under twice the starting figure within 60 s.
	var after memory
	var back time.Duration = -1
	for time.Since(closedAt) < 60*time.Second {
		after, _ = procMemory(pid)
		if after.rss < 2*start.rss {
			back = time.Since(closedAt)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	// One more health check after the closes, then the figures.
	time.Sleep(time.Second)
	stopHealth()
	worst, missed := slowest()
	stopSampling()
	<-sampled
	final, _ := procMemory(pid)

	t.Logf("%d clients x %d groups: registered (2 heartbeats each) in %v, %d frames to the clients (answers and notifications)",
		clients, groups, registered.Round(time.Millisecond), notifies)
	t.Logf("RSS: cold %s; start (groups known, no member) %s (anon %s); loaded %s (anon %s); peak %s sampled, VmHWM %s; after close %s in %v (anon %s)",
		mib(cold.rss), mib(start.rss), mib(start.anon), mib(loaded.rss), mib(loaded.anon), mib(peak.Load()), mib(final.peak),
		mib(after.rss), back.Round(time.Millisecond), mib(after.anon))
	t.Logf("health checks: slowest %v, %d missed", worst.Round(time.Millisecond), missed)
	if missed > 0 {
		t.Errorf("%d health checks got no answer within %v (slowest %v)", missed, healthLimit, worst)
	}
	if back < 0 {
		t.Errorf("RSS %s 60 s after the clients left, want under twice the starting %s", mib(after.rss), mib(start.rss))
	}
	if heavy && final.peak > 1<<30 {
		t.Errorf("peak RSS %s, want at most 1 GiB", mib(final.peak))
	}
}
