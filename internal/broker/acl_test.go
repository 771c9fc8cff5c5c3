package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestACLJavaFrames sends the frames a Java 4.9.8 client signed
// (java-vectors `acl`) to a broker with ACL on: the broker serves those
// whose signature Java's broker side accepts and refuses the others with
// Java's code and remark, before any handler runs.
func TestACLJavaFrames(t *testing.T) {
	var v struct {
		Cases []struct {
			Name           string `json:"name"`
			Code           int32  `json:"code"`
			AccessKey      string `json:"accessKey"`
			Serializations map[string]struct {
				Wire struct {
					File string `json:"file"`
				} `json:"wire"`
				BrokerParse struct {
					SignatureMatches bool `json:"signatureMatches"`
				} `json:"brokerParse"`
			} `json:"serializations"`
		} `json:"cases"`
	}
	testutil.LoadJavaVectors(t, "../../testdata", "acl", &v)
	file := filepath.Join(t.TempDir(), "plain_acl.yml")
	accounts := `accounts:
  - accessKey: RocketMQ
    secretKey: "12345678"
    topicPerms:
      - TopicTest=PUB|SUB
`
	if err := os.WriteFile(file, []byte(accounts), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	cfg := sendTestConfig(t)
	cfg.AclEnable, cfg.AclFile, cfg.Logger = true, file, logs.Logger()
	b := startBroker(t, cfg)
	cli := newTestClient(t)
	served, refused := 0, 0
	for _, tc := range v.Cases {
		if tc.Code != remoting.SendMessageV2 && tc.Code != remoting.QueryMessage {
			continue // NameServer requests
		}
		for ser, s := range tc.Serializations {
			t.Run(tc.Name+"/"+ser, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join("../../testdata", s.Wire.File))
				if err != nil {
					t.Fatal(err)
				}
				req, _, err := remoting.DecodeFrame(raw, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				resp := invokeBroker(t, cli, b, req)
				isRefusal := resp.Code == remoting.SystemError && strings.HasPrefix(resp.Remark, "org.apache.rocketmq.acl.common.AclException: ")
				if s.BrokerParse.SignatureMatches {
					if isRefusal {
						t.Fatalf("refused: %q", resp.Remark)
					}
					served++
					return
				}
				if want := "org.apache.rocketmq.acl.common.AclException: Check signature failed for accessKey=" + tc.AccessKey; resp.Code != remoting.SystemError || resp.Remark != want {
					t.Fatalf("answer %d %q, want SYSTEM_ERROR %q", resp.Code, resp.Remark, want)
				}
				refused++
			})
		}
	}
	if served < 2 || refused < 2 {
		t.Fatalf("%d frames served, %d refused", served, refused)
	}
	// The first Java send was stored: the handler ran.
	if b.store.MaxOffset("TopicTest", 0)+b.store.MaxOffset("TopicTest", 1)+b.store.MaxOffset("TopicTest", 2)+b.store.MaxOffset("TopicTest", 3) == 0 {
		t.Error("no Java send was stored")
	}
	if logs.Count("acl: request refused") < 2 {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "12345678") {
		t.Errorf("the secret key is logged:\n%s", logs.String())
	}
}

func TestACLConfig(t *testing.T) {
	cfg := sendTestConfig(t)
	cfg.AclEnable = true
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "AclFile") {
		t.Errorf("AclEnable without AclFile: %v", err)
	}
	cfg.AclFile = filepath.Join(t.TempDir(), "missing.yml")
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "missing.yml") {
		t.Errorf("missing AclFile: %v", err)
	}
}
