package console

import (
	"net/http"
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// The cluster page lists a slave under its id with its replication lag.
func TestClusterShowsSlaveLag(t *testing.T) {
	e := start(t, rmqtest.WithSlaves(1))
	testutil.WaitFor(t, wait, "the slave's row with its lag", func() bool {
		p := e.get(t, "/")
		v, _ := cell(p.body, "data-broker", "broker-a/1", "lag")
		return p.status == http.StatusOK && v == "0 B"
	})
}
