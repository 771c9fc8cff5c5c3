package rmqtest

import (
	"io"

	"github.com/go-rocketmq/rocketmq/internal/promtext"
)

// WriteMetrics writes the metrics of the running brokers to w in the
// Prometheus text exposition format, each series labelled with its
// broker's name.
func (c *Cluster) WriteMetrics(w io.Writer) error {
	var s promtext.Set
	c.mu.Lock()
	for _, sl := range c.brokers {
		if sl.b != nil && sl.id == 0 { // one series per broker name
			sl.b.CollectMetrics(&s)
		}
	}
	c.mu.Unlock()
	_, err := s.WriteTo(w)
	return err
}
