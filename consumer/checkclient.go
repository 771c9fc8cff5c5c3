package consumer

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// checkSubscriptions asks a broker of each SQL92 subscription's topic
// whether it accepts the expression (Java MQClientInstance.checkClientInBroker,
// at Start): a broker without enablePropertyFilter, or a bad expression,
// fails Start with the broker's reason instead of failing every pull. A
// broker that does not serve the check is not asked again.
func (r *runState) checkSubscriptions(ctx context.Context) error {
	for _, s := range r.c.subscriptionList() {
		if s.sel.Type != SelectorSQL92 {
			continue
		}
		route, err := r.cli.Route(ctx, s.wireTopic)
		if err != nil || len(route.BrokerDatas) == 0 {
			continue // no broker to ask yet, as Java
		}
		bd := route.BrokerDatas[rand.IntN(len(route.BrokerDatas))]
		addr := bd.MasterAddr()
		if addr == "" {
			for _, a := range bd.BrokerAddrs {
				addr = a
				break
			}
		}
		if addr == "" {
			continue
		}
		check := remoting.CheckClientRequestBody{ClientID: r.cli.ClientID(), Group: r.c.wireGroup, SubscriptionData: s.data}
		body := check.AppendJSON(nil, remoting.JSONFastjson)
		resp, err := r.cli.Invoke(ctx, addr, remoting.NewRequest(remoting.CheckClientConfig, nil, body), 0)
		if err != nil {
			return fmt.Errorf("rocketmq: check SQL92 subscription of %s at %s: %w", s.topic, addr, err)
		}
		switch resp.Code {
		case remoting.Success:
		case remoting.RequestCodeNotSupported:
			r.log.Warn("rocketmq: broker cannot check SQL92 subscriptions; pulls will tell", "group", r.cfg.group, "topic", s.topic, "addr", addr)
		default:
			return fmt.Errorf("rocketmq: SQL92 subscription of %s refused by broker %s: %w", s.topic, addr, remoting.ResponseError(resp))
		}
	}
	return nil
}
