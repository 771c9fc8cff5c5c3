package main

import (
	"context"
	"flag"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

var clusterListCmd = &command{
	name:     "clusterList",
	synopsis: "List the clusters, their brokers and each broker's version and TPS",
	setup: func(fs *flag.FlagSet) action {
		return func(ctx context.Context, a *app) error { return clusterList(ctx, a) }
	},
}

type brokerRow struct {
	Cluster string   `json:"cluster"`
	Broker  string   `json:"broker"`
	ID      int64    `json:"id"`
	Addr    string   `json:"addr"`
	Version string   `json:"version"`
	InTPS   *float64 `json:"inTPS,omitempty"`
	OutTPS  *float64 `json:"outTPS,omitempty"`
	// Error is why the broker's runtime info could not be read.
	Error string `json:"error,omitempty"`
}

func clusterList(ctx context.Context, a *app) error {
	adm, err := a.admin(ctx)
	if err != nil {
		return err
	}
	ci, err := adm.ClusterInfo(ctx)
	if err != nil {
		return err
	}
	rows := []brokerRow{}
	for _, c := range slices.Sorted(maps.Keys(ci.ClusterAddrTable)) {
		names := slices.Clone(ci.ClusterAddrTable[c])
		slices.Sort(names)
		for _, name := range slices.Compact(names) {
			bd := ci.BrokerAddrTable[name]
			for _, id := range slices.Sorted(maps.Keys(bd.BrokerAddrs)) {
				r := brokerRow{Cluster: c, Broker: name, ID: id, Addr: bd.BrokerAddrs[id]}
				kv, err := adm.BrokerRuntimeInfo(ctx, r.Addr)
				if err != nil {
					r.Error = oneLine(err)
				} else {
					r.Version = kv["brokerVersionDesc"]
					r.InTPS = firstTPS(kv["putTps"])
					r.OutTPS = firstTPS(kv["getTransferedTps"])
				}
				rows = append(rows, r)
			}
		}
	}
	return a.emit(map[string]any{"brokers": rows}, func(t *table) {
		t.row("#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS", "#OutTPS")
		for _, r := range rows {
			t.row(r.Cluster, r.Broker, r.ID, r.Addr, orDash(r.Version), tpsCell(r.InTPS), tpsCell(r.OutTPS))
		}
	})
}

// firstTPS returns the first of a broker's "tps10s tps60s tps600s" values
// rounded to two decimals, as mqadmin clusterList shows it; nil when the
// broker gives none.
func firstTPS(s string) *float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = round2(v)
	return &v
}

// round2 rounds to the two decimals the tables show.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

func tpsCell(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine is an error's message on one line, without the module prefix.
func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "rocketmq: ", "")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

var brokerStatusCmd = &command{
	name:     "brokerStatus",
	synopsis: "Show the runtime statistics of a broker, or of every broker of a cluster",
	setup: func(fs *flag.FlagSet) action {
		addr := fs.String("b", "", "broker `address`")
		cluster := fs.String("c", "", "`cluster` name: every broker of it")
		return func(ctx context.Context, a *app) error {
			if err := brokerOrCluster(*addr, *cluster); err != nil {
				return err
			}
			return brokerStatus(ctx, a, *addr, *cluster)
		}
	},
}

func brokerStatus(ctx context.Context, a *app, addr, cluster string) error {
	adm, err := a.admin(ctx)
	if err != nil {
		return err
	}
	addrs := []string{addr}
	if cluster != "" {
		ci, err := adm.ClusterInfo(ctx)
		if err != nil {
			return err
		}
		names, ok := ci.ClusterAddrTable[cluster]
		if !ok {
			return errorf("no cluster %q (the NameServer knows %s)", cluster, strings.Join(slices.Sorted(maps.Keys(ci.ClusterAddrTable)), ", "))
		}
		addrs = nil
		for _, name := range names {
			for _, id := range slices.Sorted(maps.Keys(ci.BrokerAddrTable[name].BrokerAddrs)) {
				addrs = append(addrs, ci.BrokerAddrTable[name].BrokerAddrs[id])
			}
		}
		slices.Sort(addrs)
	}
	out := make(map[string]map[string]string, len(addrs))
	for _, addr := range addrs {
		kv, err := adm.BrokerRuntimeInfo(ctx, addr)
		if err != nil {
			return err
		}
		out[addr] = kv
	}
	return a.emit(map[string]any{"brokers": out}, func(t *table) {
		for _, addr := range addrs {
			kv := out[addr]
			for _, k := range slices.Sorted(maps.Keys(kv)) {
				if cluster != "" {
					t.row(addr, k+":", kv[k])
				} else {
					t.row(k+":", kv[k])
				}
			}
		}
	})
}
