package producer

import (
	"time"

	"github.com/go-rocketmq/rocketmq/metrics"
)

// measure reports a send whose attempts are over to the metrics hook, if
// any; without one it costs a nil check.
func (p *Producer) measure(st *sendState, err error) {
	h := p.cfg.client.Metrics
	if h == nil {
		return
	}
	r := metrics.OK
	if err != nil {
		r = metrics.Error
	}
	h.Send(st.e.topic, r, len(st.e.msgs), time.Since(st.begin))
}
