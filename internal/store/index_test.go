package store

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// checkQuery finds every message by UNIQ_KEY and by each KEYS element.
func checkQuery(t *testing.T, s *Store, all []stored) {
	t.Helper()
	end := time.Now().UnixMilli() + 3_600_000
	for _, st := range all {
		var want [][]byte
		if st.m.uniq != "" {
			res, err := s.QueryByKey(st.m.topic, st.m.uniq, 32, 0, end)
			if err != nil {
				t.Fatal(err)
			}
			recs := splitRecords(t, res.Data)
			if len(recs) != 1 {
				t.Fatalf("query %s: %d records", st.m.uniq, len(recs))
			}
			want = append(want, st.expectRecord(t))
			sameBytes(t, "query by UNIQ_KEY", recs[0], want[0])
		}
		forEachKey(st.m.keys, func(k string) {
			res, err := s.QueryByKey(st.m.topic, k, 64, 0, end)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range splitRecords(t, res.Data) {
				h, _ := parseRecord(r, false)
				if h.PhysicalOffset == st.res.PhysicalOffset {
					found = true
				}
				if !recordHasKey(r, st.m.topic, k) {
					t.Fatalf("query %s/%s returned a record without the key", st.m.topic, k)
				}
			}
			if !found {
				t.Fatalf("query %s/%s misses the message at %d", st.m.topic, k, st.res.PhysicalOffset)
			}
		})
	}
}

func TestQueryByKey(t *testing.T) {
	cfg := testConfig(t)
	cfg.IndexSlots = 4   // many collisions
	cfg.IndexEntries = 9 // 8 entries per file: many files
	var now int64 = 1_700_000_000_000
	cfg.Clock = func() time.Time { return time.UnixMilli(now) }
	s := openStore(t, cfg)
	var all []stored
	for i := range 30 {
		now += 10_000
		m := msg{topic: "Idx", queue: int32(i % 2), body: body(i, 40), uniq: fmt.Sprintf("U-%d", i), keys: fmt.Sprintf("k%d group%d", i, i%3)}
		if i%5 == 0 {
			m.topic = "Other"
		}
		all = append(all, put(t, s, m))
	}
	checkQuery(t, s, all)

	t.Run("keys shared by many", func(t *testing.T) {
		res, err := s.QueryByKey("Idx", "group1", 64, 0, now)
		if err != nil {
			t.Fatal(err)
		}
		// i%3 == 1 and i%5 != 0: 1 4 7 13 16 19 22 28
		if res.Messages != 8 {
			t.Fatalf("%d messages", res.Messages)
		}
		recs := splitRecords(t, res.Data)
		h0, _ := parseRecord(recs[0], false)
		if h0.PhysicalOffset != all[28].res.PhysicalOffset {
			t.Fatal("results are not newest first")
		}
	})
	t.Run("maxNum", func(t *testing.T) {
		res, _ := s.QueryByKey("Idx", "group1", 3, 0, now)
		if res.Messages != 3 {
			t.Fatalf("%d messages", res.Messages)
		}
	})
	t.Run("time window", func(t *testing.T) {
		// Message i is stored at base + (i+1)*10s.
		base := all[0].res.StoreTimestamp - 10_000
		res, _ := s.QueryByKey("Idx", "group1", 64, base+70_000, base+200_000)
		if res.Messages != 4 { // 7 13 16 19
			t.Fatalf("%d messages", res.Messages)
		}
	})
	t.Run("other topic", func(t *testing.T) {
		res, _ := s.QueryByKey("Other", "group1", 64, 0, now)
		if res.Messages != 2 { // 10 25
			t.Fatalf("%d messages", res.Messages)
		}
		res, _ = s.QueryByKey("Nope", "group1", 64, 0, now)
		if res.Messages != 0 {
			t.Fatalf("%d messages", res.Messages)
		}
	})
	t.Run("last update fields", func(t *testing.T) {
		res, _ := s.QueryByKey("Idx", "none", 64, 0, now)
		if res.IndexLastUpdateTimestamp != all[29].res.StoreTimestamp || res.IndexLastUpdatePhyOffset != all[29].res.PhysicalOffset {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("files", func(t *testing.T) {
		ents, _ := os.ReadDir(filepath.Join(cfg.Dir, "index"))
		name := regexp.MustCompile(`^\d{17}$`)
		total := 0
		for _, e := range ents {
			if !name.MatchString(e.Name()) {
				t.Fatalf("index file name %q", e.Name())
			}
			raw, _ := os.ReadFile(filepath.Join(cfg.Dir, "index", e.Name()))
			if len(raw) != 40+4*4+9*20 {
				t.Fatalf("index file size %d", len(raw))
			}
			count := int(binary.BigEndian.Uint32(raw[36:]))
			total += count - 1
			if count < 2 || count > 9 {
				t.Fatalf("indexCount %d", count)
			}
			slots := int(binary.BigEndian.Uint32(raw[32:]))
			if slots < 1 || slots > 4 {
				t.Fatalf("hashSlotCount %d", slots)
			}
		}
		if total != 90 { // UNIQ_KEY and two KEYS per message
			t.Fatalf("%d index entries in %d files", total, len(ents))
		}
	})
}

// The on-disk layout of one index file, checked field by field.
func TestIndexFileLayout(t *testing.T) {
	cfg := testConfig(t)
	cfg.IndexSlots = 7
	cfg.IndexEntries = 100
	var now int64 = 1_700_000_000_000
	cfg.Clock = func() time.Time { return time.UnixMilli(now) }
	s := openStore(t, cfg)
	a := put(t, s, msg{topic: "L", body: "a", uniq: "K1"})
	now += 5500
	b := put(t, s, msg{topic: "L", body: "b", uniq: "K1"})
	s.Close()
	ents, _ := os.ReadDir(filepath.Join(cfg.Dir, "index"))
	if len(ents) != 1 {
		t.Fatalf("%d index files", len(ents))
	}
	if want := time.UnixMilli(1_700_000_000_000).Format("20060102150405") + "000"; ents[0].Name() != want {
		t.Fatalf("index file %s, want %s", ents[0].Name(), want)
	}
	raw, _ := os.ReadFile(filepath.Join(cfg.Dir, "index", ents[0].Name()))
	be := binary.BigEndian
	hdr := []int64{int64(be.Uint64(raw[0:])), int64(be.Uint64(raw[8:])), int64(be.Uint64(raw[16:])), int64(be.Uint64(raw[24:])),
		int64(be.Uint32(raw[32:])), int64(be.Uint32(raw[36:]))}
	want := []int64{a.res.StoreTimestamp, b.res.StoreTimestamp, a.res.PhysicalOffset, b.res.PhysicalOffset, 1, 3}
	if fmt.Sprint(hdr) != fmt.Sprint(want) {
		t.Fatalf("header %v, want %v", hdr, want)
	}
	hash := indexKeyHash("L", "K1")
	slot := 40 + int(hash%7)*4
	if got := be.Uint32(raw[slot:]); got != 2 {
		t.Fatalf("slot holds %d, want 2", got)
	}
	e1 := raw[40+7*4+20 : 40+7*4+40]
	e2 := raw[40+7*4+40 : 40+7*4+60]
	check := func(e []byte, phys int64, diff, prev uint32) {
		if int32(be.Uint32(e)) != hash || int64(be.Uint64(e[4:])) != phys || be.Uint32(e[12:]) != diff || be.Uint32(e[16:]) != prev {
			t.Fatalf("entry % x, want hash %d phys %d diff %d prev %d", e, hash, phys, diff, prev)
		}
	}
	check(e1, a.res.PhysicalOffset, 0, 0)
	check(e2, b.res.PhysicalOffset, 5, 1)
}

// A garbage index header is moved aside instead of indexing out of range.
func TestIndexCorruptHeader(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	all := fill(t, s, 10)
	s.Close()
	ents, _ := os.ReadDir(filepath.Join(cfg.Dir, "index"))
	for _, e := range ents {
		p := filepath.Join(cfg.Dir, "index", e.Name())
		f, _ := os.OpenFile(p, os.O_WRONLY, 0)
		f.WriteAt([]byte{0x7f, 0xff, 0xff, 0xff}, 36) // indexCount
		f.Close()
	}
	s2 := openStore(t, cfg)
	checkAll(t, s2, all)
	// The records of the last segment were indexed again into a new file.
	checkQuery(t, s2, all)
	extra := put(t, s2, msg{topic: "RecA", body: "extra", uniq: "EXTRA"})
	checkQuery(t, s2, []stored{extra})
}

// TestQueryByKeyHashCollisions: "Aa" and "BB" have the same Java hash, so
// the newer "BB" entries come first in the walk and are dropped; the walk
// goes on, across index files, until maxNum real matches are found.
func TestQueryByKeyHashCollisions(t *testing.T) {
	if indexKeyHash("C", "Aa") != indexKeyHash("C", "BB") {
		t.Fatal("the keys do not collide")
	}
	cfg := testConfig(t)
	cfg.IndexEntries = 5 // 4 entries per file
	s := openStore(t, cfg)
	var aa []stored
	for i := range 6 {
		aa = append(aa, put(t, s, msg{topic: "C", body: body(i, 10), keys: "Aa"}))
	}
	for i := range 9 {
		put(t, s, msg{topic: "C", body: body(i, 10), keys: "BB"})
	}
	end := time.Now().UnixMilli() + 3_600_000
	tests := []struct {
		maxNum int
		want   []stored // newest first
	}{
		{1, aa[5:]},
		{3, []stored{aa[5], aa[4], aa[3]}},
		{64, []stored{aa[5], aa[4], aa[3], aa[2], aa[1], aa[0]}},
	}
	for _, tt := range tests {
		res, err := s.QueryByKey("C", "Aa", tt.maxNum, 0, end)
		if err != nil {
			t.Fatal(err)
		}
		recs := splitRecords(t, res.Data)
		if len(recs) != len(tt.want) || res.Messages != len(tt.want) {
			t.Fatalf("maxNum %d: %d records, want %d", tt.maxNum, len(recs), len(tt.want))
		}
		for i, r := range recs {
			h, _ := parseRecord(r, false)
			if h.PhysicalOffset != tt.want[i].res.PhysicalOffset {
				t.Errorf("maxNum %d: record %d at %d, want %d", tt.maxNum, i, h.PhysicalOffset, tt.want[i].res.PhysicalOffset)
			}
		}
	}
}
