package namesrv

import (
	"context"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// BenchmarkGetRouteInfo measures the route handler alone (no network): a
// topic on two broker names with a master and a slave each.
func BenchmarkGetRouteInfo(b *testing.B) {
	for _, tt := range []struct {
		name    string
		version int32
	}{{"standard", 409}, {"fastjson", 317}} {
		b.Run(tt.name, func(b *testing.B) {
			ns, err := New(Config{})
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range []*registration{
				reg("c", "broker-a", "10.0.0.1:10911", 0, 1, tc("T", 8, 6)),
				reg("c", "broker-a", "10.0.0.2:10911", 1, 1),
				reg("c", "broker-b", "10.0.0.3:10911", 0, 1, tc("T", 8, 6)),
				reg("c", "broker-b", "10.0.0.4:10911", 1, 1),
			} {
				ns.routes.register(r)
			}
			req := routeReq("T", tt.version, nil)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if resp := ns.getRouteInfoByTopic(ctx, nil, req); resp.Code != remoting.Success {
					b.Fatal(resp.Remark)
				}
			}
		})
	}
}
