package message

import (
	"github.com/go-rocketmq/rocketmq"
	"net/netip"
	"testing"
)

func TestAppendRecordWithoutHosts(t *testing.T) {
	f := RecordFields{Topic: "T", Body: []byte("b"), Properties: "A\x01b"}
	rec, sys, err := f.AppendRecord(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != f.RecordSize() || sys&(FlagBornHostV6|FlagStoreHostV6) != 0 {
		t.Fatalf("len %d size %d sysFlag %#x", len(rec), f.RecordSize(), sys)
	}
	m, n, err := DecodeRecord(rec)
	if err != nil || n != len(rec) {
		t.Fatalf("decode: n=%d err=%v", n, err)
	}
	zero := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	if m.BornHost != zero || m.StoreHost != zero {
		t.Fatalf("hosts %v %v, want %v", m.BornHost, m.StoreHost, zero)
	}
}

func TestAppendRecordIPv6Hosts(t *testing.T) {
	f := RecordFields{Topic: "T", Body: []byte("b"),
		BornHost:  netip.MustParseAddrPort("[fd00::2]:1234"),
		StoreHost: netip.MustParseAddrPort("10.0.0.1:10911")}
	rec, sys, err := f.AppendRecord(nil)
	if err != nil {
		t.Fatal(err)
	}
	if sys&FlagBornHostV6 == 0 || sys&FlagStoreHostV6 != 0 {
		t.Fatalf("sysFlag %#x", sys)
	}
	m, _, err := DecodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if m.BornHost != f.BornHost || m.StoreHost != f.StoreHost {
		t.Fatalf("hosts %v %v", m.BornHost, m.StoreHost)
	}
}

func TestSendStatusString(t *testing.T) {
	for s, want := range map[rocketmq.SendStatus]string{rocketmq.SendOK: "SEND_OK", rocketmq.SendFlushDiskTimeout: "FLUSH_DISK_TIMEOUT",
		rocketmq.SendFlushSlaveTimeout: "FLUSH_SLAVE_TIMEOUT", rocketmq.SendSlaveNotAvailable: "SLAVE_NOT_AVAILABLE", 9: "SendStatus(9)"} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", int(s), got, want)
		}
	}
}
