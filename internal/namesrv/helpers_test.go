package namesrv

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

const wireDir = "../../testdata/wire"

// startNS starts a NameServer on a loopback port and closes it at cleanup.
func startNS(t *testing.T, cfg Config) *NameServer {
	t.Helper()
	ns, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := ns.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ns.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ns
}

// request builds a request with the given Java version.
func request(code int32, version int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	r := remoting.NewRequest(code, ext, body)
	r.Version = version
	return r
}

func headerReq(code int32, h remoting.CustomHeader, body []byte) *remoting.Command {
	var ext remoting.ExtFields
	if h != nil {
		ext = h.AppendExt(nil)
	}
	return request(code, remoting.DefaultVersion, ext, body)
}

// wireFile reads one captured frame by its number.
func wireFile(t *testing.T, n int) []byte {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(wireDir, padNum(n)+"-*.bin"))
	if err != nil || len(m) != 1 {
		t.Fatalf("captured frame %d: %v %v", n, m, err)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wireCommand(t *testing.T, n int) *remoting.Command {
	t.Helper()
	cmd, _, err := remoting.DecodeFrame(wireFile(t, n), 0)
	if err != nil {
		t.Fatalf("decode captured frame %d: %v", n, err)
	}
	return cmd
}

func padNum(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// wantCode fails unless resp has the code (and remark, when not empty).
func wantCode(t *testing.T, resp *remoting.Command, code int32, remark string) {
	t.Helper()
	if resp.Code != code || (remark != "" && resp.Remark != remark) {
		t.Fatalf("response %s %q, want %s %q", remoting.ResponseCodeName(resp.Code), resp.Remark,
			remoting.ResponseCodeName(code), remark)
	}
}

// sameBytes fails with hex dumps when got != want.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s mismatch\n got %q\nwant %q\n got hex:\n%s\nwant hex:\n%s", what, got, want,
			hex.Dump(got), hex.Dump(want))
	}
}
