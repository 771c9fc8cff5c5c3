package rmqtest

import (
	"context"
	"slices"

	"github.com/go-rocketmq/rocketmq/internal/transport"
)

// MasterBrokers returns the sorted names of the brokers that have a master
// registered at the NameServer address nameServer (GET_BROKER_CLUSTER_INFO),
// so that a test against an external cluster can skip what needs more
// brokers than it has.
func MasterBrokers(ctx context.Context, nameServer string) ([]string, error) {
	cli, err := transport.New()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	masters, err := masterAddrs(ctx, cli, nameServer)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(masters))
	for name := range masters {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}
