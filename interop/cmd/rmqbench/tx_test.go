package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

func TestParseConfigTx(t *testing.T) {
	c, err := parseConfig([]string{"-mode", "tx", "-client", "ours", "-callers", "4"}, &bytes.Buffer{})
	if err != nil || c.mode != modeTx || c.client != clientOurs || c.callers != 4 {
		t.Fatalf("parsed %+v, %v", c, err)
	}
	if _, err := parseConfig([]string{"-mode", "tx", "-client", "floor"}, &bytes.Buffer{}); err == nil {
		t.Fatal("-client floor -mode tx accepted")
	}
}

// TestTxMode runs transaction mode of each client against our broker in a
// rmqbench child process, then against an rmqtest cluster, whose topic
// must afterwards hold exactly the transactions counted plus the warm-up
// one: every transaction committed once.
func TestTxMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and the official client")
	}
	for _, client := range []string{clientOfficial, clientOurs} {
		t.Run(client+"/child", func(t *testing.T) {
			r := runTx(t, client)
			if r.BrokerCPUusMsg <= 0 || r.ClientCPUusMsg <= 0 {
				t.Fatalf("cpu per transaction: client %v broker %v", r.ClientCPUusMsg, r.BrokerCPUusMsg)
			}
		})
		t.Run(client+"/rmqtest", func(t *testing.T) {
			c := rmqtest.StartCluster(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			topic := "bench_tx_" + client
			if err := rmqtest.CreateTopic(ctx, c.NameServerAddr(), topic, 4); err != nil {
				t.Fatal(err)
			}
			r := runTx(t, client, "-namesrv", c.NameServerAddr(), "-topic", topic)
			// END_TRANSACTION is oneway: the last commits may still be
			// on their way when rmqbench returns.
			var got int64
			var err error
			testutil.Poll(10*time.Second, func() bool {
				got, err = topicMessages(ctx, c.NameServerAddr(), topic)
				return err != nil || got >= r.Msgs+1
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != r.Msgs+1 {
				t.Fatalf("topic holds %d messages, rmqbench committed %d (+1 warm-up)", got, r.Msgs)
			}
		})
	}
}

// runTx runs rmqbench -mode tx for client with 2 callers and returns its
// result, which must count transactions and no errors.
func runTx(t *testing.T, client string, args ...string) result {
	t.Helper()
	args = append([]string{"-client", client, "-mode", modeTx, "-callers", "2", "-size", "256", "-duration", "300ms"}, args...)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errOut.String())
	}
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if r.Client != client || r.Mode != modeTx || r.Msgs == 0 || r.Errors != 0 || r.MsgsPerS <= 0 || r.P50us <= 0 {
		t.Fatalf("result %+v\nstderr: %s", r, errOut.String())
	}
	return r
}

// topicMessages adds up the max offsets of topic's queues on every master
// serving it.
func topicMessages(ctx context.Context, nameServer, topic string) (int64, error) {
	cli, err := transport.New()
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	invoke := func(addr string, code int32, ext remoting.ExtFields) (*remoting.Command, error) {
		resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(code, ext, nil))
		if err == nil {
			err = remoting.ResponseError(resp)
		}
		return resp, err
	}
	rh := remoting.GetRouteInfoRequestHeader{Topic: topic}
	resp, err := invoke(nameServer, remoting.GetRouteInfoByTopic, rh.AppendExt(nil))
	if err != nil {
		return 0, fmt.Errorf("route of %s: %w", topic, err)
	}
	var rd remoting.TopicRouteData
	if err := rd.DecodeJSON(resp.Body); err != nil {
		return 0, err
	}
	queues := make(map[string]int)
	for _, qd := range rd.QueueDatas {
		queues[qd.BrokerName] = int(qd.WriteQueueNums)
	}
	var sum int64
	for _, bd := range rd.BrokerDatas {
		addr, ok := bd.BrokerAddrs[0]
		if !ok {
			continue
		}
		for q := 0; q < queues[bd.BrokerName]; q++ {
			h := remoting.GetMaxOffsetRequestHeader{Topic: topic, QueueID: int32(q)}
			resp, err := invoke(addr, remoting.GetMaxOffset, h.AppendExt(nil))
			if err != nil {
				return 0, fmt.Errorf("max offset of %s/%d: %w", topic, q, err)
			}
			var oh remoting.OffsetResponseHeader
			if err := oh.FromExt(resp.Ext); err != nil {
				return 0, err
			}
			sum += oh.Offset
		}
	}
	return sum, nil
}
