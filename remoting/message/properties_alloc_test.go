package message

import "testing"

// TestPropertyReadStackNoAlloc: reading a properties string kept in a
// stack buffer does not move the buffer to the heap.
func TestPropertyReadStackNoAlloc(t *testing.T) {
	s := "KEYS\x01a\x02TAGS\x01TagA\x02WAIT\x01true"
	m := testing.AllocsPerRun(100, func() {
		var buf [64]byte
		b := append(buf[:0], s...)
		v, _ := PropertyValue(b, "TAGS")
		if len(v) != 4 {
			panic("x")
		}
	})
	k := testing.AllocsPerRun(100, func() {
		var buf [64]byte
		b := append(buf[:0], s...)
		_, v, _, _ := NextProperty(b)
		if len(v) != 1 {
			panic("x")
		}
	})
	if m != 0 || k != 0 {
		t.Fatalf("PropertyValue %v, NextProperty %v allocs", m, k)
	}
}

// TestJavaHashCodeNoAlloc: hashing bytes, non-ASCII included, allocates
// nothing.
func TestJavaHashCodeNoAlloc(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		var buf [32]byte
		b := append(buf[:0], "tag-é-😀"...)
		if JavaHashCode(b) != JavaHashCode("tag-é-😀") {
			panic("hash")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocs", n)
	}
}
