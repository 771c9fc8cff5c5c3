// Command admin looks inside a cluster with the admin client: it lists
// the clusters and brokers, creates a topic on every master of the first
// cluster, sends a few messages with keys, then shows the topic's route and
// per-queue offsets and finds one message by key and by id.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	topic := flag.String("topic", "TopicAdminExample", "topic to create and inspect")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, *namesrv, *topic, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, namesrv, topic string, out io.Writer) error {
	a, err := admin.New(admin.WithNameServers(namesrv))
	if err != nil {
		return err
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	defer a.Close(context.Background())

	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return err
	}
	clusters := slices.Sorted(maps.Keys(ci.ClusterAddrTable))
	if len(clusters) == 0 {
		return fmt.Errorf("the NameServer knows no cluster")
	}
	for _, c := range clusters {
		for _, b := range slices.Sorted(slices.Values(ci.ClusterAddrTable[c])) {
			fmt.Fprintf(out, "cluster %s broker %s master %s\n", c, b, ci.BrokerAddrTable[b].MasterAddr())
		}
	}

	if err := a.CreateTopicInCluster(ctx, clusters[0], admin.TopicConfig{Name: topic, ReadQueues: 4, WriteQueues: 4}); err != nil {
		return err
	}
	fmt.Fprintf(out, "topic %s created in cluster %s\n", topic, clusters[0])

	p, err := producer.New(producer.WithGroup("example_admin"), producer.WithNameServers(namesrv))
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	defer p.Shutdown(context.Background())
	var lastID string
	for i := range 3 {
		m, err := producer.NewMessage(topic, []byte(fmt.Sprintf("hello %d", i)), producer.Keys(fmt.Sprintf("order-%d", i)))
		if err != nil {
			return err
		}
		res, err := p.Send(ctx, m)
		if err != nil {
			return err
		}
		lastID = res.MsgID
	}

	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return err
	}
	for _, qd := range r.QueueDatas {
		fmt.Fprintf(out, "route: broker %s read %d write %d perm %d\n", qd.BrokerName, qd.ReadQueueNums, qd.WriteQueueNums, qd.Perm)
	}
	stats, err := a.TopicStats(ctx, topic)
	if err != nil {
		return err
	}
	for _, mq := range admin.SortedQueues(stats) {
		o := stats[mq]
		fmt.Fprintf(out, "queue %s/%d: min %d max %d\n", mq.BrokerName, mq.QueueID, o.MinOffset, o.MaxOffset)
	}

	// A Java broker indexes a message shortly after the send is answered.
	for {
		msgs, err := a.QueryMessage(ctx, topic, "order-1", 0, time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
		if err != nil {
			return err
		}
		if len(msgs) > 0 {
			fmt.Fprintf(out, "by key order-1: %q (id %s)\n", msgs[0].Body, msgs[0].MsgID)
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("message with key order-1 not found: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	m, err := a.ViewMessage(ctx, topic, lastID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "by id %s: %q\n", lastID, m.Body)
	return nil
}
