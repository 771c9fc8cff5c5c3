package rocketmq

import (
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func loadVectors(t testing.TB, group string, v any) {
	t.Helper()
	testutil.LoadJavaVectors(t, "testdata", group, v)
}
