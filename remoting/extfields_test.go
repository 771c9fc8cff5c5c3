package remoting

import (
	"reflect"
	"testing"
)

func TestExtFields(t *testing.T) {
	var nilExt ExtFields
	if v, ok := nilExt.Get("a"); ok || v != "" {
		t.Fatal("Get on nil")
	}
	if nilExt.Map() != nil || nilExt.Clone() != nil || nilExt.Dedup() != nil {
		t.Fatal("nil ExtFields must stay nil")
	}
	nilExt.Del("a") // no panic, stays nil
	if nilExt != nil {
		t.Fatal("Del made nil non-nil")
	}

	e := ExtFields{{"a", "1"}, {"b", "2"}, {"a", "3"}}
	tests := []struct {
		name string
		do   func(e *ExtFields)
		want ExtFields
	}{
		{"Set existing updates every copy", func(e *ExtFields) { e.Set("a", "9") }, ExtFields{{"a", "9"}, {"b", "2"}, {"a", "9"}}},
		{"Set new appends", func(e *ExtFields) { e.Set("c", "4") }, ExtFields{{"a", "1"}, {"b", "2"}, {"a", "3"}, {"c", "4"}}},
		{"Add appends a duplicate", func(e *ExtFields) { e.Add("b", "5") }, ExtFields{{"a", "1"}, {"b", "2"}, {"a", "3"}, {"b", "5"}}},
		{"Del removes every copy", func(e *ExtFields) { e.Del("a") }, ExtFields{{"b", "2"}}},
		{"Del missing", func(e *ExtFields) { e.Del("x") }, ExtFields{{"a", "1"}, {"b", "2"}, {"a", "3"}}},
		{"Dedup", func(e *ExtFields) { *e = e.Dedup() }, ExtFields{{"a", "3"}, {"b", "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := e.Clone()
			tt.do(&c)
			if !reflect.DeepEqual(c, tt.want) {
				t.Fatalf("got %q, want %q", c, tt.want)
			}
			if !reflect.DeepEqual(e, ExtFields{{"a", "1"}, {"b", "2"}, {"a", "3"}}) {
				t.Fatal("Clone shares memory with the original")
			}
		})
	}
	if v, ok := e.Get("a"); !ok || v != "3" {
		t.Fatalf("Get = %q, want last copy", v)
	}
	if !e.Has("b") || e.Has("z") {
		t.Fatal("Has")
	}
	if m := e.Map(); !reflect.DeepEqual(m, map[string]string{"a": "3", "b": "2"}) {
		t.Fatalf("Map = %v", m)
	}
	if d := (ExtFields{{"a", "1"}}).Dedup(); len(d) != 1 {
		t.Fatal("Dedup without duplicates")
	}
	var fresh ExtFields
	fresh.Set("k", "v")
	if !reflect.DeepEqual(fresh, ExtFields{{"k", "v"}}) {
		t.Fatalf("Set on nil: %q", fresh)
	}
}
