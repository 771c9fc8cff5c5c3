package rmqtest

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/transport"
)

// MasterBrokers returns the brokers that have a master registered at the
// NameServer address nameServer (GET_BROKER_CLUSTER_INFO), by name, with
// the master's address, so that a test against an external cluster can
// skip what needs more brokers than it has and reach the brokers it has.
func MasterBrokers(ctx context.Context, nameServer string) (map[string]string, error) {
	cli, err := transport.New()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	return masterAddrs(ctx, cli, nameServer)
}
