package broker

import (
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestCheckClientConfig(t *testing.T) {
	b := startBroker(t, Config{StoreDir: t.TempDir(), ListenAddr: "127.0.0.1:0", CommitLogSegmentSize: 4 << 20})
	cli := newTestClient(t)
	body := func(typ, expr string) []byte {
		c := remoting.CheckClientRequestBody{ClientID: "ip@1", Group: "g",
			SubscriptionData: remoting.SubscriptionData{Topic: "T", SubString: expr, ExpressionType: typ}}
		return c.AppendJSON(nil, remoting.JSONFastjson)
	}
	tests := []struct {
		name   string
		body   []byte
		code   int32
		remark string
	}{
		{"tag", body(remoting.ExpressionTypeTag, "A || B"), remoting.Success, ""},
		{"no type", body("", "*"), remoting.Success, ""},
		{"sql92", body(remoting.ExpressionTypeSQL92, "a > 1"), remoting.SystemError, "The broker does not support consumer to filter message by SQL92"},
		{"bad body", []byte("{"), remoting.SystemError, ""},
		{"no body", nil, remoting.SystemError, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := invokeBroker(t, cli, b, remoting.NewRequest(remoting.CheckClientConfig, nil, tc.body))
			if resp.Code != tc.code || (tc.remark != "" && resp.Remark != tc.remark) {
				t.Fatalf("got %d %q, want %d %q", resp.Code, resp.Remark, tc.code, tc.remark)
			}
		})
	}
}
