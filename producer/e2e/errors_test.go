package e2e

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestErrorTexts sends as a new user would, to a topic that does not
// exist, with the NameServer address pointing at a broker, at an HTTP
// server and at a closed port, and checks the exact text of the error and
// what it matches.
func TestErrorTexts(t *testing.T) {
	cl := rmqtest.StartCluster(t, rmqtest.WithoutAutoCreateTopic())
	brokerAddr := cl.BrokerAddr(cl.BrokerNames()[0])
	webAddr := httpPeer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name, namesrv, topic string
		want                 string
		is                   []error
	}{
		{
			name: "missing topic", namesrv: cl.NameServerAddr(), topic: "NoSuchTopic",
			want: `rocketmq: send to NoSuchTopic failed: topic "NoSuchTopic" does not exist: NameServer ` + cl.NameServerAddr() + ` has no route for it`,
			is:   []error{rocketmq.ErrNoRoute, remoting.ErrTopicNotExist, producer.ErrNoQueue},
		},
		{
			name: "broker port", namesrv: brokerAddr, topic: "T",
			want: `rocketmq: send to T failed: ` + brokerAddr + ` is not a NameServer (it looks like a broker: it does not serve route lookups); check the NameServer address, 9876 by default`,
			is:   []error{rocketmq.ErrNotNameServer, remoting.ErrRequestCodeNotSupported},
		},
		{
			name: "http port", namesrv: webAddr, topic: "T",
			want: `rocketmq: send to T failed: no route for topic "T": ` + webAddr + ` does not speak the RocketMQ protocol (it answered HTTP)`,
			is:   []error{rocketmq.ErrProtocol, rocketmq.ErrConnClosed},
		},
		{
			name: "closed port", namesrv: closedAddr, topic: "T",
			want: `rocketmq: send to T failed: no route for topic "T": ` + closedAddr + `: dial failed: connect: connection refused`,
			is:   []error{rocketmq.ErrDial},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := producer.New(producer.WithGroup("errtexts"), producer.WithNameServers(tc.namesrv))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown(ctx)
			_, err = p.Send(ctx, &rocketmq.Message{Topic: tc.topic, Body: []byte("x")})
			if err == nil {
				t.Fatal("send succeeded")
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error text\n got: %s\nwant: %s", got, tc.want)
			}
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(err, %v) = false", target)
				}
			}
		})
	}
}

// httpPeer listens on 127.0.0.1:0 and answers whatever arrives as an HTTP
// server answers a request it cannot parse.
func httpPeer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err != nil {
					return
				}
				_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return ln.Addr().String()
}
