package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/rmqtest"
)

func TestRun(t *testing.T) {
	c := rmqtest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, c.NameServerAddr(), "TopicAdminExample", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"cluster DefaultCluster broker ", "topic TopicAdminExample created in cluster DefaultCluster",
		"read 4 write 4 perm 6", `by key order-1: "hello 1"`, `: "hello 2"`} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
