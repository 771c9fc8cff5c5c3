package broker

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// A properties string whose pairs lack a separator is not refused: like a
// 4.9.8 broker, which parses it with MessageDecoder.string2messageProperties
// and stores what that map holds, the send succeeds and the stored
// properties are Java's parse of the input (plus UNIQ_KEY and CLUSTER).
func TestSendPropertiesParsedAsJava(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/java-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Properties struct {
			Decode struct {
				Cases []struct {
					Name   string            `json:"name"`
					Input  string            `json:"input"`
					Result map[string]string `json:"result"`
				} `json:"cases"`
			} `json:"decode"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	cases := v.Properties.Decode.Cases
	if len(cases) < 10 {
		t.Fatalf("java-vectors.json: %d properties decode cases", len(cases))
	}
	e := sendTestBroker(t, nil)
	e.b.topics.ensure("PropsT", 1, rocketmq.PermRead|rocketmq.PermWrite)
	for i, c := range cases {
		resp := e.invoke(t, sendV2Req(sendTestHeader("PropsT", 0, c.Input), []byte("x")))
		if resp.Code != remoting.Success {
			t.Errorf("%s: code %d %q, want SUCCESS as Java", c.Name, resp.Code, resp.Remark)
			continue
		}
		msgs := sendReadBack(t, e.b, "PropsT", 0)
		if len(msgs) != i+1 {
			t.Fatalf("%s: %d stored, want %d", c.Name, len(msgs), i+1)
		}
		got := msgs[i].Properties
		for k, want := range c.Result {
			if got[k] != want {
				t.Errorf("%s: stored %q = %q, want %q", c.Name, k, got[k], want)
			}
		}
		for k := range got {
			if _, ok := c.Result[k]; !ok && k != rocketmq.PropertyUniqKey && k != rocketmq.PropertyCluster {
				t.Errorf("%s: stored %q, which Java's parse lacks", c.Name, k)
			}
		}
	}
}
