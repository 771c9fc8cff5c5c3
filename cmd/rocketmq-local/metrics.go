package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/promtext"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// serveMetrics serves c's metrics at http://addr/metrics in the Prometheus
// text format. It returns a function that stops the server, and the bound
// address.
func serveMetrics(addr string, c *rmqtest.Cluster) (stop func(), bound string, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("-metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		var buf bytes.Buffer
		if err := c.WriteMetrics(&buf); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", promtext.ContentType)
		_, _ = w.Write(buf.Bytes())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // ends with ErrServerClosed at stop
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close() // what Shutdown did not finish in time
		<-done
	}, ln.Addr().String(), nil
}
