package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// BenchmarkQueryMessage1M is one QUERY_MESSAGE round trip over loopback
// for a key among 1,000,000 indexed messages, in the default index
// geometry.
func BenchmarkQueryMessage1M(b *testing.B) {
	const n = 1_000_000
	cfg := sendTestConfig(b)
	cfg.CommitLogSegmentSize = 256 << 20
	cfg.IndexSlots, cfg.IndexEntries = 0, 0 // the defaults
	br := startBroker(b, cfg)
	cli := newTestClient(b)
	body := make([]byte, 100)
	ctx := context.Background()
	for i := 0; i < n; i++ {
		key := "order-" + strconv.Itoa(i)
		_, err := br.store.PutMessage(ctx, &store.PutRequest{
			RecordFields: message.RecordFields{
				Topic:         "QBench",
				QueueID:       int32(i & 7),
				Body:          body,
				Properties:    message.EncodeProperties(map[string]string{rocketmq.PropertyKeys: key}),
				BornTimestamp: time.Now().UnixMilli(),
				BornHost:      pullBornHost,
				StoreHost:     br.storeHost,
			},
			Keys: key,
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	end := time.Now().Add(time.Hour).UnixMilli()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := (i * 7919) % n
		resp := invokeBroker(b, cli, br, queryReq("QBench", "order-"+strconv.Itoa(k), 64, 0, end, nil))
		if resp.Code != remoting.Success || len(resp.Body) == 0 {
			b.Fatalf("order-%d: code %d remark %q", k, resp.Code, resp.Remark)
		}
	}
}
