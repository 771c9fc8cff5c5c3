package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
)

// msgView is a message as the JSON output shows it. Body is the body as
// text (bytes that are not UTF-8 become U+FFFD).
type msgView struct {
	MsgID           string            `json:"msgId"`
	OffsetMsgID     string            `json:"offsetMsgId"`
	Topic           string            `json:"topic"`
	Tags            string            `json:"tags"`
	Keys            []string          `json:"keys"`
	Broker          string            `json:"broker"`
	QueueID         int32             `json:"queueId"`
	QueueOffset     int64             `json:"queueOffset"`
	CommitLogOffset int64             `json:"commitLogOffset"`
	ReconsumeTimes  int32             `json:"reconsumeTimes"`
	BornTimestamp   int64             `json:"bornTimestamp"`
	StoreTimestamp  int64             `json:"storeTimestamp"`
	BornHost        string            `json:"bornHost"`
	StoreHost       string            `json:"storeHost"`
	SysFlag         int32             `json:"sysFlag"`
	Properties      map[string]string `json:"properties"`
	Body            string            `json:"body"`
}

func viewOf(m *rocketmq.MessageExt) msgView {
	keys := m.Keys()
	if keys == nil {
		keys = []string{}
	}
	props := m.Properties
	if props == nil {
		props = map[string]string{}
	}
	return msgView{
		MsgID: m.MsgID, OffsetMsgID: m.OffsetMsgID, Topic: m.Topic, Tags: m.Tag(), Keys: keys,
		Broker: m.BrokerName, QueueID: m.QueueID, QueueOffset: m.QueueOffset, CommitLogOffset: m.CommitLogOffset,
		ReconsumeTimes: m.ReconsumeTimes, BornTimestamp: m.BornTimestamp, StoreTimestamp: m.StoreTimestamp,
		BornHost: m.BornHost.String(), StoreHost: m.StoreHost.String(), SysFlag: m.SysFlag,
		Properties: props, Body: string(m.Body),
	}
}

var queryMsgByKeyCmd = &command{
	name:     "queryMsgByKey",
	synopsis: "Find the messages of a topic by key",
	setup: func(fs *flag.FlagSet) action {
		topic := fs.String("t", "", "`topic` name")
		key := fs.String("k", "", "message `key`")
		begin := fs.String("b", "", "stored at or after this `timestamp` (ms or yyyy-MM-dd#HH:mm:ss:SSS; default: no bound)")
		end := fs.String("e", "", "stored at or before this `timestamp` (default: no bound)")
		maxNum := fs.Int("c", admin.DefaultQueryMaxNum, "at most this `number` of messages from each broker")
		return func(ctx context.Context, a *app) error {
			if err := required("t", *topic, "k", *key); err != nil {
				return err
			}
			if *maxNum <= 0 {
				return usagef("-c %d: want a positive number", *maxNum)
			}
			var from, to time.Time
			var err error
			now := time.Now()
			if *begin != "" {
				if from, err = parseTimestamp(*begin, now); err != nil {
					return err
				}
			}
			if *end != "" {
				if to, err = parseTimestamp(*end, now); err != nil {
					return err
				}
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			msgs, err := adm.QueryMessage(ctx, *topic, *key, *maxNum, from, to)
			if err != nil {
				return err
			}
			views := []msgView{}
			for _, m := range msgs {
				views = append(views, viewOf(m))
			}
			return a.emit(map[string]any{"topic": *topic, "key": *key, "messages": views}, func(t *table) {
				t.row("#Message ID", "#Offset Message ID", "#Broker Name", "#QID", "#Offset", "#Store Time")
				for _, v := range views {
					t.row(v.MsgID, v.OffsetMsgID, v.Broker, v.QueueID, v.QueueOffset, humanTime(v.StoreTimestamp))
				}
			})
		}
	},
}

type trackRow struct {
	Group string `json:"group"`
	Type  string `json:"trackType"`
	Error string `json:"error,omitempty"`
}

var queryMsgByIdCmd = &command{
	name:     "queryMsgById",
	synopsis: "Show a message by id and whether each group consuming its topic has consumed it",
	setup: func(fs *flag.FlagSet) action {
		id := fs.String("i", "", "message `id`: the offset id, or with -t the client id (UNIQ_KEY) too")
		topic := fs.String("t", "", "`topic` of the message (needed for a client id)")
		return func(ctx context.Context, a *app) error {
			if err := required("i", *id); err != nil {
				return err
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			var m *rocketmq.MessageExt
			if *topic == "" {
				// An offset id names the broker to ask; ask only brokers
				// of the cluster, not any address a mistyped id makes.
				host, _, derr := rocketmq.DecodeOffsetMsgID(*id)
				if derr != nil {
					return errorf("message id %s: %w (a client id needs -t topic)", *id, derr)
				}
				var name string
				if name, err = brokerByHost(ctx, adm, host); err != nil {
					return err
				}
				if name == "" {
					return errorf("message id %s: its host %s is no broker of the cluster (a client id needs -t topic)", *id, host)
				}
				m, err = adm.ViewMessageByOffsetID(ctx, *id)
			} else {
				m, err = adm.ViewMessage(ctx, *topic, *id)
			}
			if err != nil {
				return err
			}
			if m.BrokerName == "" {
				if m.BrokerName, err = brokerByHost(ctx, adm, m.StoreHost); err != nil {
					return err
				}
			}
			tracks, err := adm.MessageTrack(ctx, m)
			if err != nil {
				return err
			}
			rows := []trackRow{}
			for _, tr := range tracks {
				r := trackRow{Group: tr.Group, Type: tr.Type.String()}
				if tr.Err != nil {
					r.Error = oneLine(tr.Err)
				}
				rows = append(rows, r)
			}
			v := viewOf(m)
			return a.emit(map[string]any{"message": v, "tracks": rows}, func(t *table) {
				t.row("OffsetID:", v.OffsetMsgID)
				t.row("MsgID:", v.MsgID)
				t.row("Topic:", v.Topic)
				t.row("Tags:", "["+v.Tags+"]")
				t.row("Keys:", "["+strings.Join(v.Keys, " ")+"]")
				t.row("Broker Name:", v.Broker)
				t.row("Queue ID:", v.QueueID)
				t.row("Queue Offset:", v.QueueOffset)
				t.row("CommitLog Offset:", v.CommitLogOffset)
				t.row("Reconsume Times:", v.ReconsumeTimes)
				t.row("Born Timestamp:", humanTime(v.BornTimestamp))
				t.row("Store Timestamp:", humanTime(v.StoreTimestamp))
				t.row("Born Host:", v.BornHost)
				t.row("Store Host:", v.StoreHost)
				t.row("System Flag:", v.SysFlag)
				t.row("Properties:", propsString(v.Properties))
				t.row("Message Body:", v.Body)
				t.row("")
				t.row("#ConsumerGroup", "#TrackType", "#ExceptionDesc")
				for _, r := range rows {
					t.row(r.Group, r.Type, r.Error)
				}
			})
		}
	},
}

// brokerByHost returns the name of the broker that stores at host (any
// of its replicas), "" when none does.
func brokerByHost(ctx context.Context, adm *admin.Admin, host netip.AddrPort) (string, error) {
	ci, err := adm.ClusterInfo(ctx)
	if err != nil {
		return "", err
	}
	for _, name := range slices.Sorted(maps.Keys(ci.BrokerAddrTable)) {
		for _, addr := range ci.BrokerAddrTable[name].BrokerAddrs {
			if ap, err := netip.ParseAddrPort(addr); err == nil && ap == host {
				return name, nil
			}
		}
	}
	return "", nil
}

// propsString renders properties as Java's Map.toString does, sorted.
func propsString(p map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(p)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + p[k])
	}
	b.WriteByte('}')
	return b.String()
}

type sendRow struct {
	Broker      string `json:"broker"`
	QueueID     int    `json:"queueId"`
	QueueOffset int64  `json:"queueOffset"`
	Status      string `json:"status"`
	MsgID       string `json:"msgId"`
	OffsetMsgID string `json:"offsetMsgId"`
}

var sendCmd = &command{
	name:     "send",
	synopsis: "Send messages to a topic (for quick tests)",
	setup: func(fs *flag.FlagSet) action {
		topic := fs.String("t", "", "`topic` name")
		body := fs.String("p", "", "message `body` (UTF-8 text)")
		bodyFile := fs.String("f", "", "read the message body from `FILE` (- for standard input), up to 4 MiB")
		keys := fs.String("k", "", "message `keys`, space separated")
		tags := fs.String("c", "", "message `tag`")
		count := fs.Int("count", 1, "`number` of messages to send")
		group := fs.String("g", "rmqadmin_producer", "producer `group`")
		broker := fs.String("b", "", "send to this `broker` name (with -i)")
		qid := fs.Int("i", -1, "send to this queue `id` (with -b)")
		return func(ctx context.Context, a *app) error {
			if err := required("t", *topic); err != nil {
				return err
			}
			switch {
			case *body == "" && *bodyFile == "":
				return usagef("give the body with -p text or -f FILE")
			case *body != "" && *bodyFile != "":
				return usagef("give -p or -f, not both")
			}
			if *count <= 0 || *count > 1_000_000 {
				return usagef("-count %d: want 1 to 1000000", *count)
			}
			if (*broker == "") != (*qid < 0) {
				return usagef("-b and -i go together")
			}
			b := []byte(*body)
			if *bodyFile != "" {
				var err error
				if b, err = readBody(*bodyFile, a.stdin); err != nil {
					return err
				}
			}
			return send(ctx, a, *topic, b, *keys, *tags, *group, *count, *broker, *qid)
		}
	},
}

// readBody reads a message body from path, or from stdin for "-". It
// reads at most one byte over the largest body a producer sends.
func readBody(path string, stdin io.Reader) ([]byte, error) {
	name := path
	var r io.Reader
	if path == "-" {
		name, r = "standard input", stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("-f: %w", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, rocketmq.DefaultMaxMessageSize+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("-f: read %s: %w", name, err)
	case len(b) == 0:
		return nil, fmt.Errorf("-f: %s is empty; a message needs a body", name)
	case len(b) > rocketmq.DefaultMaxMessageSize:
		return nil, fmt.Errorf("-f: %s is over %d bytes, the largest body a producer sends", name, rocketmq.DefaultMaxMessageSize)
	}
	return b, nil
}

func send(ctx context.Context, a *app, topic string, body []byte, keys, tag, group string, count int, broker string, qid int) error {
	opts := []producer.Option{producer.WithGroup(group), producer.WithNameServers(a.nameServerList()...)}
	if a.namespace != "" {
		opts = append(opts, producer.WithNamespace(a.namespace))
	}
	if a.cred != nil {
		opts = append(opts, producer.WithACL(*a.cred))
	}
	if a.tlsConfig != nil {
		opts = append(opts, producer.WithTLS(a.tlsConfig))
	}
	p, err := producer.New(opts...)
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	a.onClose(p.Shutdown)
	var mopts []producer.MessageOption
	if tag != "" {
		mopts = append(mopts, producer.Tag(tag))
	}
	if k := strings.Fields(keys); len(k) > 0 {
		mopts = append(mopts, producer.Keys(k...))
	}
	s := p.With()
	if broker != "" {
		s = p.With(producer.ToQueue(rocketmq.MessageQueue{Topic: topic, BrokerName: broker, QueueID: qid}))
	}
	rows := []sendRow{}
	for range count {
		m, err := producer.NewMessage(topic, body, mopts...)
		if err != nil {
			return err
		}
		res, err := s.Send(ctx, m)
		if err != nil {
			return err
		}
		rows = append(rows, sendRow{res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset, res.Status.String(), res.MsgID, res.OffsetMsgID})
	}
	return a.emit(map[string]any{"topic": topic, "results": rows}, func(t *table) {
		t.row("#Broker Name", "#QID", "#Queue Offset", "#Send Result", "#MsgId", "#Offset MsgId")
		for _, r := range rows {
			t.row(r.Broker, r.QueueID, r.QueueOffset, r.Status, r.MsgID, r.OffsetMsgID)
		}
	})
}

var consumeCmd = &command{
	name:     "consume",
	synopsis: "Pull messages of a topic as a consumer group and print them (for quick tests)",
	setup: func(fs *flag.FlagSet) action {
		topic := fs.String("t", "", "`topic` name")
		group := fs.String("g", "rmqadmin_consumer", "consumer `group`; a new group starts at the first message")
		tags := fs.String("tags", "*", "tag `expression` (\"*\" or tag||tag)")
		count := fs.Int("c", 0, "stop after this `number` of messages (0: no limit)")
		dur := fs.Duration("d", 0, "stop after this `duration` (default: -timeout)")
		return func(ctx context.Context, a *app) error {
			if err := required("t", *topic); err != nil {
				return err
			}
			if *count < 0 || *dur < 0 {
				return usagef("-c %d -d %v: want non-negative values", *count, *dur)
			}
			return consume(ctx, a, *topic, *group, *tags, *count, *dur)
		}
	},
}

func consume(ctx context.Context, a *app, topic, group, tags string, count int, dur time.Duration) error {
	opts := []consumer.Option{consumer.WithGroup(group), consumer.WithNameServers(a.nameServerList()...),
		consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithAutoCommit(false)}
	if count > 0 {
		opts = append(opts, consumer.WithPullBatchSize(min(count, 32)))
	}
	if a.namespace != "" {
		opts = append(opts, consumer.WithNamespace(a.namespace))
	}
	if a.cred != nil {
		opts = append(opts, consumer.WithACL(*a.cred))
	}
	if a.tlsConfig != nil {
		opts = append(opts, consumer.WithTLS(a.tlsConfig))
	}
	// A consumer waits for a topic that does not exist yet; a quick test
	// rather wants to hear it is missing.
	adm, err := a.admin(ctx)
	if err != nil {
		return err
	}
	if _, err := adm.TopicRoute(ctx, topic); err != nil {
		return err
	}
	c, err := consumer.NewPull(opts...)
	if err != nil {
		return err
	}
	if err := c.Subscribe(topic, consumer.Tags(tags)); err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	a.onClose(c.Shutdown)
	pollCtx := ctx
	if dur > 0 {
		var cancel context.CancelFunc
		pollCtx, cancel = context.WithTimeout(ctx, dur)
		defer cancel()
	}
	views := []msgView{}
	next := make(map[rocketmq.MessageQueue]int64)
	var t *table
	if !a.json {
		t = newTable(a.out)
		t.row("#MsgId", "#Broker Name", "#QID", "#Offset", "#Tags", "#Keys", "#Body")
	}
	for count == 0 || len(views) < count {
		msgs, err := c.Poll(pollCtx)
		if err != nil {
			if pollCtx.Err() != nil {
				break
			}
			return err
		}
		for _, m := range msgs {
			if count > 0 && len(views) == count {
				break
			}
			v := viewOf(m)
			views = append(views, v)
			next[rocketmq.MessageQueue{Topic: m.Topic, BrokerName: m.BrokerName, QueueID: int(m.QueueID)}] = m.QueueOffset + 1
			if t != nil {
				t.row(v.MsgID, v.Broker, v.QueueID, v.QueueOffset, v.Tags, strings.Join(v.Keys, " "), v.Body)
			}
		}
	}
	if len(next) > 0 {
		cctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if err := c.Commit(cctx, next); err != nil {
			return err
		}
	}
	if a.json {
		err = writeJSON(a.out, map[string]any{"topic": topic, "group": group, "messages": views})
	} else {
		err = t.flush()
	}
	if err != nil {
		return err
	}
	if count > 0 && len(views) < count {
		return errorf("consume: %d of %d messages of %s before the time ran out", len(views), count, topic)
	}
	return nil
}
