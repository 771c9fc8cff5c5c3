package store

import (
	"errors"
	"testing"
)

func TestUsedRatio(t *testing.T) {
	tests := []struct {
		name   string
		f      DiskUsageFunc
		want   float64
		wantOK bool
	}{
		{"half", func(string) (uint64, uint64, error) { return 50, 100, nil }, 0.5, true},
		{"full", func(string) (uint64, uint64, error) { return 100, 100, nil }, 1, true},
		{"error", func(string) (uint64, uint64, error) { return 0, 0, errors.New("x") }, 0, false},
		{"no total", func(string) (uint64, uint64, error) { return 0, 0, nil }, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := usedRatio(tt.f, "d")
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("usedRatio = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestStatfsUsageOfTempDir(t *testing.T) {
	used, total, err := statfsUsage(t.TempDir())
	if err != nil {
		t.Skipf("no disk reading here: %v", err)
	}
	if total == 0 || used > total {
		t.Fatalf("statfsUsage = used %d, total %d", used, total)
	}
}
