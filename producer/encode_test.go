package producer

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// propKeys returns the keys of a properties string in wire order.
func propKeys(s string) []string {
	var keys []string
	for it := message.Properties(s); it.Next(); {
		keys = append(keys, it.Key())
	}
	return keys
}

// manyProps is a message whose properties Go's map order would shuffle:
// with 20 keys, two runs in map order agree with a chance far below 1e-9.
func manyProps(topic string, withID bool) *rocketmq.Message {
	m := &rocketmq.Message{Topic: topic, Body: []byte("body"), Properties: map[string]string{}}
	for i := range 20 {
		m.Properties[fmt.Sprintf("k%02d", 19-i)] = fmt.Sprint("v", i)
	}
	m.Properties[rocketmq.PropertyTags] = "TagA"
	if withID {
		m.Properties[rocketmq.PropertyUniqKey] = "0A0B0C0D00002A9F0000000000000001"
	}
	return m
}

// TestPropertiesSortedOnTheWire: every send writes its properties, added
// ones included, in key order, so the same message gives the same bytes.
func TestPropertiesSortedOnTheWire(t *testing.T) {
	p, err := New(WithGroup("pg"), WithNameServers("127.0.0.1:9876"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		withID bool
		extra  []prop
	}{
		{"given id", true, nil},
		{"generated id", false, nil},
		{"request", true, []prop{{rocketmq.PropertyCorrelationID, "c"}, {rocketmq.PropertyMessageTTL, "3000"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var first string
			for run := range 5 {
				e, err := p.prepare(KindSync, []*rocketmq.Message{manyProps("T", c.withID)}, c.extra...)
				if err != nil {
					t.Fatal(err)
				}
				keys := propKeys(e.props)
				if !slices.IsSorted(keys) || len(keys) != 23+len(c.extra) {
					t.Fatalf("keys %q: not sorted or missing some", keys)
				}
				id, _ := message.PropertyValue(e.props, rocketmq.PropertyUniqKey)
				if id != e.ids || len(id) < 32 {
					t.Fatalf("UNIQ_KEY %q, send id %q", id, e.ids)
				}
				if !c.withID {
					continue // the generated id differs between runs
				}
				if run == 0 {
					first = e.props
				} else if e.props != first {
					t.Fatalf("run %d: %q\nrun 0: %q", run, e.props, first)
				}
			}
		})
	}
}

// TestBatchPropertiesSorted: each batch element carries its properties in
// key order, with its UNIQ_KEY the one the send reports.
func TestBatchPropertiesSorted(t *testing.T) {
	p, err := New(WithGroup("pg"), WithNameServers("127.0.0.1:9876"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []*rocketmq.Message{manyProps("T", true), manyProps("T", false), manyProps("T", false)}
	e, err := p.prepare(KindSync, msgs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.release(e)
	els, err := message.DecodeBatchElements(e.body)
	if err != nil || len(els) != len(msgs) {
		t.Fatalf("%d elements, %v", len(els), err)
	}
	ids := strings.Split(e.ids, ",")
	for i, el := range els {
		keys := propKeys(el.Properties)
		if !slices.IsSorted(keys) || len(keys) != 23 {
			t.Errorf("element %d keys %q: not sorted or missing some", i, keys)
		}
		if id, _ := message.PropertyValue(el.Properties, rocketmq.PropertyUniqKey); id != ids[i] {
			t.Errorf("element %d UNIQ_KEY %q, send id %q", i, id, ids[i])
		}
		if string(el.Body) != "body" || binary.BigEndian.Uint32(e.body[12:]) != 0 {
			t.Errorf("element %d body %q", i, el.Body)
		}
	}
}
