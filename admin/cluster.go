package admin

import (
	"context"
	"slices"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// ClusterInfo returns the clusters and brokers the NameServer knows
// (GET_BROKER_CLUSTER_INFO, docs/PROTOCOL.md §4.8).
func (a *Admin) ClusterInfo(ctx context.Context) (*remoting.ClusterInfo, error) {
	resp, err := a.invokeNameServer(ctx, func() *remoting.Command {
		return remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil)
	}, "cluster info")
	if err != nil {
		return nil, err
	}
	ci := new(remoting.ClusterInfo)
	if err := decode(resp, ci, "cluster info"); err != nil {
		return nil, err
	}
	return ci, nil
}

// BrokerRuntimeInfo returns the runtime statistics of the broker at addr
// (GET_BROKER_RUNTIME_INFO): Java's key/value table, e.g. "brokerVersion",
// "msgPutTotalTodayNow", "commitLogMaxOffset".
func (a *Admin) BrokerRuntimeInfo(ctx context.Context, brokerAddr string) (map[string]string, error) {
	resp, err := a.invoke(ctx, brokerAddr, remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil), "broker runtime info")
	if err != nil {
		return nil, err
	}
	var kv remoting.KVTable
	if err := decode(resp, &kv, "broker runtime info"); err != nil {
		return nil, err
	}
	return kv.Table, nil
}

// clusterMasters returns the master addresses of the brokers of cluster,
// sorted; ErrNoBroker when there is none.
func (a *Admin) clusterMasters(ctx context.Context, cluster string) ([]string, error) {
	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	addrs, _ := clusterMasters(ci, cluster)
	if len(addrs) == 0 {
		return nil, errorf("cluster %q has no master broker: %w", cluster, ErrNoBroker)
	}
	return addrs, nil
}

// clusterMasters returns the master addresses of the brokers of cluster and
// the names of those brokers, both sorted by name.
func clusterMasters(ci *remoting.ClusterInfo, cluster string) (addrs, names []string) {
	names = slices.Clone(ci.ClusterAddrTable[cluster])
	slices.Sort(names)
	names = slices.Compact(names)
	out := names[:0]
	for _, name := range names {
		if bd, ok := ci.BrokerAddrTable[name]; ok && bd.MasterAddr() != "" {
			addrs = append(addrs, bd.MasterAddr())
			out = append(out, name)
		}
	}
	return addrs, out
}

// allMasters returns the master addresses of every broker the NameServer
// knows, sorted; ErrNoBroker when there is none.
func (a *Admin) allMasters(ctx context.Context) ([]string, error) {
	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, bd := range ci.BrokerAddrTable {
		if addr := bd.MasterAddr(); addr != "" {
			addrs = append(addrs, addr)
		}
	}
	if len(addrs) == 0 {
		return nil, errorf("the NameServer knows no master broker: %w", ErrNoBroker)
	}
	slices.Sort(addrs)
	return addrs, nil
}

// routeMasters returns the master addresses of the brokers in a route.
func routeMasters(r *remoting.TopicRouteData) []string {
	var addrs []string
	for _, bd := range r.BrokerDatas {
		if addr := bd.MasterAddr(); addr != "" {
			addrs = append(addrs, addr)
		}
	}
	slices.Sort(addrs)
	return addrs
}
