package main

import (
	"context"

	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// clusterOptions are the settings rmqbench gives an in-process cluster.
type clusterOptions struct {
	syncFlush bool   // -flush
	topic     string // -topic, created before the run
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
	// Created here, with the queues auto-creation would give it, so that a
	// consumer started after the warm-up send finds the route at once.
	if err := c.CreateTopic(ctx, o.topic, 4); err != nil {
		c.Close(context.Background())
		return "", nil, err
	}
	return c.NameServerAddr(), func() error { return c.Close(context.Background()) }, nil
}
