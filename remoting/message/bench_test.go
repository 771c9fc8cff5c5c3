package message

import (
	"testing"

	"github.com/go-rocketmq/rocketmq"
)

// BenchmarkScanRecords32x1KiB walks a PULL body with ScanRecord and reads
// the TAGS property of each record, as the store does on recovery and
// queries: no allocation.
func BenchmarkScanRecords32x1KiB(b *testing.B) {
	body := pullBody32x1KiB(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		for off := 0; off < len(body); n++ {
			v, err := ScanRecord(body[off:])
			if err != nil {
				b.Fatal(err)
			}
			if tag, _ := PropertyValue(v.Properties, rocketmq.PropertyTags); len(tag) != 4 {
				b.Fatalf("tag %q", tag)
			}
			off += v.Size
		}
		if n != 32 {
			b.Fatal(n)
		}
	}
}

// BenchmarkAppendSortedProperties writes a producer's properties with the
// extras it adds, keys sorted: no allocation.
func BenchmarkAppendSortedProperties(b *testing.B) {
	props := map[string]string{
		rocketmq.PropertyTags: "TagA", rocketmq.PropertyKeys: "KEY1 KEY2", "orderId": "1001",
	}
	extra := []Property{
		{rocketmq.PropertyUniqKey, "C0A8000A30391B6D358600A1B2C30001"},
		{rocketmq.PropertyWaitStoreMsgOK, "true"},
	}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for range b.N {
		buf = AppendSortedProperties(buf[:0], props, nil, extra...)
	}
}

// BenchmarkPropertyIter reads every pair of a properties string.
func BenchmarkPropertyIter(b *testing.B) {
	s := EncodeProperties(map[string]string{
		rocketmq.PropertyTags: "TagA", rocketmq.PropertyKeys: "KEY1 KEY2", rocketmq.PropertyUniqKey: "C0A8000A30391B6D358600A1B2C30001",
		rocketmq.PropertyWaitStoreMsgOK: "true", "orderId": "1001",
	})
	b.ReportAllocs()
	for range b.N {
		n := 0
		for it := Properties(s); it.Next(); {
			n += len(it.Value())
		}
		if n == 0 {
			b.Fatal(n)
		}
	}
}
