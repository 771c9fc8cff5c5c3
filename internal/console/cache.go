package console

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq/admin"
)

// listTTL is how long the topic, group and cluster lists are reused; the
// console's own changes drop them at once.
const listTTL = 3 * time.Second

// cache holds the lists that are costly on a large cluster (10,000 topics
// are one NameServer call but a large body; groups are one call per
// master), so that paging through them does not repeat the calls.
type cache struct {
	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	once sync.Once // the call in flight, shared by concurrent requests
	at   time.Time
	val  []string
	err  error
}

func newCache() *cache { return &cache{entries: make(map[string]*entry)} }

func (c *cache) invalidate() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}

// drop forgets one list.
func (c *cache) drop(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

func (c *cache) get(ctx context.Context, key string, load func(context.Context) ([]string, error)) ([]string, error) {
	c.mu.Lock()
	e := c.entries[key]
	if e == nil || (!e.at.IsZero() && time.Since(e.at) > listTTL) {
		e = &entry{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.val, e.err = load(ctx)
		c.mu.Lock()
		e.at = time.Now()
		if e.err != nil && c.entries[key] == e {
			delete(c.entries, key) // errors are not kept
		}
		c.mu.Unlock()
	})
	return e.val, e.err
}

func (c *cache) topics(ctx context.Context, a *admin.Admin) ([]string, error) {
	return c.get(ctx, "topics", func(ctx context.Context) ([]string, error) {
		ts, err := a.Topics(ctx)
		if err != nil {
			return nil, err
		}
		return slices.Sorted(slices.Values(ts)), nil
	})
}

func (c *cache) clusters(ctx context.Context, a *admin.Admin) ([]string, error) {
	return c.get(ctx, "clusters", func(ctx context.Context) ([]string, error) {
		ci, err := a.ClusterInfo(ctx)
		if err != nil {
			return nil, err
		}
		return slices.Sorted(maps.Keys(ci.ClusterAddrTable)), nil
	})
}

// groups lists the groups of every master broker, asked in parallel.
func (c *cache) groups(ctx context.Context, a *admin.Admin) ([]string, error) {
	return c.get(ctx, "groups", func(ctx context.Context) ([]string, error) {
		ci, err := a.ClusterInfo(ctx)
		if err != nil {
			return nil, err
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		set := map[string]bool{}
		var firstErr error
		for _, bd := range ci.BrokerAddrTable {
			addr := bd.MasterAddr()
			if addr == "" {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				gs, err := a.Groups(ctx, addr)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					firstErr = err
					return
				}
				for g := range gs {
					set[g] = true
				}
			}()
		}
		wg.Wait()
		if len(set) == 0 && firstErr != nil {
			return nil, firstErr
		}
		return slices.Sorted(maps.Keys(set)), nil
	})
}
