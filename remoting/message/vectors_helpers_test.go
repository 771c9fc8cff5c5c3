package message

import (
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

const vectorsDir = "../../testdata"

func loadVectors(t testing.TB, group string, v any) {
	t.Helper()
	testutil.LoadJavaVectors(t, vectorsDir, group, v)
}

type vfile = testutil.VectorFile

func readVFile(t testing.TB, f vfile) []byte {
	t.Helper()
	return testutil.ReadVectorFile(t, vectorsDir, f)
}

var (
	mustHex   = testutil.MustHex
	diffBytes = testutil.DiffBytes
)
