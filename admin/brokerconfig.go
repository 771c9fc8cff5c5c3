package admin

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/javaprops"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// GetBrokerConfig returns the configuration of the broker at brokerAddr
// (GET_BROKER_CONFIG): Java's config keys and values, e.g. "brokerName",
// "flushDiskType", "fileReservedTime".
func (a *Admin) GetBrokerConfig(ctx context.Context, brokerAddr string) (map[string]string, error) {
	resp, err := a.invoke(ctx, brokerAddr, remoting.NewRequest(remoting.GetBrokerConfig, nil, nil), "broker config")
	if err != nil {
		return nil, err
	}
	m, err := javaprops.Map(string(resp.Body))
	if err != nil {
		return nil, errorf("broker config at %s: bad response body: %w", brokerAddr, err)
	}
	return m, nil
}

// UpdateBrokerConfig sets the given config keys on the broker at
// brokerAddr (UPDATE_BROKER_CONFIG), as Java's mqadmin updateBrokerConfig
// does. A Java broker, like ours, applies the keys it allows to change at
// run time at once, records the others for its next start, persists them
// and ignores keys it does not know; it refuses brokerConfigPath,
// rocketmqHome and configBlackList (NO_PERMISSION).
func (a *Admin) UpdateBrokerConfig(ctx context.Context, brokerAddr string, props map[string]string) error {
	if len(props) == 0 {
		return errorf("update broker config: no key given")
	}
	for k := range props {
		if k == "" {
			return errorf("update broker config: empty key")
		}
	}
	// Java's client writes the pairs unescaped (MixAll.properties2String);
	// escaping them reads back the same on any broker and keeps a value's
	// backslashes and line breaks from changing other keys.
	body := []byte(javaprops.Store(props))
	_, err := a.invoke(ctx, brokerAddr, remoting.NewRequest(remoting.UpdateBrokerConfig, nil, body), "update broker config")
	return err
}
