package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-rocketmq/rocketmq/admin"
)

var getBrokerConfigCmd = &command{
	name:     "getBrokerConfig",
	synopsis: "Show the configuration of a broker, or of every broker of a cluster",
	setup: func(fs *flag.FlagSet) action {
		addr := fs.String("b", "", "broker `address`")
		cluster := fs.String("c", "", "`cluster` name: every broker of it, masters and slaves")
		return func(ctx context.Context, a *app) error {
			if err := brokerOrCluster(*addr, *cluster); err != nil {
				return err
			}
			return getBrokerConfig(ctx, a, strings.TrimSpace(*addr), strings.TrimSpace(*cluster))
		}
	},
}

var updateBrokerConfigCmd = &command{
	name:     "updateBrokerConfig",
	synopsis: "Change one configuration key of a broker, or of every master of a cluster",
	setup: func(fs *flag.FlagSet) action {
		addr := fs.String("b", "", "broker `address`")
		cluster := fs.String("c", "", "`cluster` name: every master of it")
		key := fs.String("k", "", "config `key`, e.g. fileReservedTime")
		value := fs.String("v", "", "config `value`")
		return func(ctx context.Context, a *app) error {
			if err := brokerOrCluster(*addr, *cluster); err != nil {
				return err
			}
			k, v := strings.TrimSpace(*key), strings.TrimSpace(*value)
			if k == "" {
				return usagef("give -k key and -v value")
			}
			return updateBrokerConfig(ctx, a, strings.TrimSpace(*addr), strings.TrimSpace(*cluster), k, v)
		}
	},
}

// clusterBrokers returns the addresses of cluster's brokers, sorted:
// masters only, or masters and slaves.
func clusterBrokers(ctx context.Context, adm *admin.Admin, cluster string, mastersOnly bool) ([]string, error) {
	ci, err := adm.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	names, ok := ci.ClusterAddrTable[cluster]
	if !ok {
		return nil, errorf("no cluster %q (the NameServer knows %s)", cluster, strings.Join(slices.Sorted(maps.Keys(ci.ClusterAddrTable)), ", "))
	}
	var addrs []string
	for _, name := range names {
		for id, addr := range ci.BrokerAddrTable[name].BrokerAddrs {
			if id == 0 || !mastersOnly {
				addrs = append(addrs, addr)
			}
		}
	}
	slices.Sort(addrs)
	return slices.Compact(addrs), nil
}

func getBrokerConfig(ctx context.Context, a *app, addr, cluster string) error {
	adm, err := a.admin(ctx)
	if err != nil {
		return err
	}
	addrs := []string{addr}
	if cluster != "" {
		if addrs, err = clusterBrokers(ctx, adm, cluster, false); err != nil {
			return err
		}
	}
	out := make(map[string]map[string]string, len(addrs))
	for _, addr := range addrs {
		m, err := adm.GetBrokerConfig(ctx, addr)
		if err != nil {
			return err
		}
		out[addr] = m
	}
	// As mqadmin getBrokerConfig: a "key = value" line per key.
	return a.emit(map[string]any{"brokers": out}, func(t *table) {
		for _, addr := range addrs {
			for _, k := range slices.Sorted(maps.Keys(out[addr])) {
				if cluster != "" {
					t.row(addr, k, "=", out[addr][k])
				} else {
					t.row(k, "=", out[addr][k])
				}
			}
		}
	})
}

func updateBrokerConfig(ctx context.Context, a *app, addr, cluster, key, value string) error {
	adm, err := a.admin(ctx)
	if err != nil {
		return err
	}
	addrs := []string{addr}
	if cluster != "" {
		if addrs, err = clusterBrokers(ctx, adm, cluster, true); err != nil {
			return err
		}
	}
	// Every master is tried, as mqadmin does; the failures are reported
	// together.
	var updated []string
	var errs []error
	for _, addr := range addrs {
		if err := adm.UpdateBrokerConfig(ctx, addr, map[string]string{key: value}); err != nil {
			errs = append(errs, err)
			continue
		}
		updated = append(updated, addr)
	}
	if len(updated) > 0 || len(errs) == 0 {
		if a.json {
			if err := writeJSON(a.out, map[string]any{"updated": updated, "key": key, "value": value}); err != nil {
				return err
			}
		} else {
			for _, addr := range updated {
				fmt.Fprintf(a.out, "update broker config success, %s\n", addr)
			}
		}
	}
	return errors.Join(errs...)
}
