package main

import (
	"context"
	"fmt"

	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// defaultQueues is the topic's queue count without -queues, what a
// broker's topic auto-creation gives (defaultTopicQueueNums).
const defaultQueues = 4

// clusterOptions are the settings rmqbench gives an in-process cluster.
type clusterOptions struct {
	syncFlush bool   // -flush
	topic     string // -topic, created before the run
	queues    int    // -queues of the topic
}

// startInProcess starts a NameServer and one broker (rmqtest, storing in a
// temporary directory it removes again) in this process, creates the
// benchmark topic, and returns the NameServer address and a function that
// stops both.
func startInProcess(ctx context.Context, o clusterOptions) (namesrv string, stop func() error, err error) {
	var opts []rmqtest.Option
	if o.syncFlush {
		opts = append(opts, rmqtest.WithSyncFlush())
	}
	c, err := rmqtest.NewCluster(opts...)
	if err != nil {
		return "", nil, err
	}
	// Created here (by default with the queues auto-creation would give
	// it), so that a consumer started after the warm-up send finds the
	// route at once.
	if err := c.CreateTopic(ctx, o.topic, o.queues); err != nil {
		c.Close(context.Background())
		return "", nil, err
	}
	return c.NameServerAddr(), func() error { return c.Close(context.Background()) }, nil
}

// createTopic creates topic with queues read and write queues on every
// master of the cluster behind namesrv (-namesrv with -queues).
func createTopic(ctx context.Context, namesrv, topic string, queues int) error {
	ctx, cancel := context.WithTimeout(ctx, warmupTimeout)
	defer cancel()
	addrs := splitAddrs(namesrv)
	if len(addrs) == 0 {
		return fmt.Errorf("-queues %d: no NameServer address in %q", queues, namesrv)
	}
	if err := rmqtest.CreateTopic(ctx, addrs[0], topic, queues); err != nil {
		return fmt.Errorf("-queues %d: %w", queues, err)
	}
	return nil
}
