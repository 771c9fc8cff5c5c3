package broker

import (
	"strconv"
	"time"
)

// haConfKeys are the broker.conf keys of replication (Java
// MessageStoreConfig and BrokerConfig names and defaults).
var haConfKeys = []confKey{
	{name: "brokerRole", get: func(c *Config) string { return c.Role.String() },
		set: func(c *Config, v string) error {
			r, err := ParseBrokerRole(v)
			c.Role = r
			return err
		}},
	{name: "haListenPort", get: func(c *Config) string {
		if c.HAListenPort > 0 {
			return strconv.Itoa(c.HAListenPort)
		}
		_, p := splitHostPort(c.ListenAddr)
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			return strconv.Itoa(n + 1)
		}
		return "0"
	}, set: func(c *Config, v string) error { return setInt(&c.HAListenPort, v, 0, 65535) }},
	{name: "brokerIP2", get: func(c *Config) string {
		if c.BrokerIP2 != "" {
			return c.BrokerIP2
		}
		h, _ := splitHostPort(c.ListenAddr)
		return h
	}, set: func(c *Config, v string) error { return setName(&c.BrokerIP2, v) }},
	{name: "haMasterAddress", get: func(c *Config) string { return c.HAMasterAddress },
		set: func(c *Config, v string) error { c.HAMasterAddress = v; return nil }},
	{name: "haSendHeartbeatInterval", get: func(c *Config) string { return millis(orDefault(c.HASendHeartbeatInterval, 5*time.Second)) },
		set: func(c *Config, v string) error { return setMillis(&c.HASendHeartbeatInterval, v) }},
	{name: "haHousekeepingInterval", get: func(c *Config) string { return millis(orDefault(c.HAHousekeepingInterval, 20*time.Second)) },
		set: func(c *Config, v string) error { return setMillis(&c.HAHousekeepingInterval, v) }},
	{name: "haTransferBatchSize", get: func(c *Config) string { return strconv.Itoa(orDefault(c.HATransferBatchSize, 32<<10)) },
		set: func(c *Config, v string) error { return setInt(&c.HATransferBatchSize, v, 1, 64<<20) }},
	{name: "haSlaveFallbehindMax", get: func(c *Config) string {
		return strconv.FormatInt(orDefault(c.HASlaveFallbehindMax, 256<<20), 10)
	}, set: func(c *Config, v string) error { return setInt(&c.HASlaveFallbehindMax, v, 1, 1<<62) }},
	{name: "slaveReadEnable", get: func(c *Config) string { return strconv.FormatBool(c.SlaveReadEnable) },
		set: func(c *Config, v string) error { return setBool(&c.SlaveReadEnable, v) }},
	{name: "accessMessageInMemoryMaxRatio", get: func(c *Config) string {
		switch r := c.AccessMessageInMemoryMaxRatio; {
		case r < 0:
			return "0"
		case r == 0:
			return "40"
		default:
			return strconv.Itoa(r)
		}
	}, set: func(c *Config, v string) error {
		if err := setInt(&c.AccessMessageInMemoryMaxRatio, v, 0, 100); err != nil {
			return err
		}
		if c.AccessMessageInMemoryMaxRatio == 0 {
			c.AccessMessageInMemoryMaxRatio = -1 // 0 percent; the zero value means the default
		}
		return nil
	}},
	{name: "fastListenPort", get: func(c *Config) string {
		if c.FastListenPort > 0 {
			return strconv.Itoa(c.FastListenPort)
		}
		_, p := splitHostPort(c.ListenAddr)
		if n, err := strconv.Atoi(p); err == nil && n > 2 {
			return strconv.Itoa(n - 2)
		}
		return "0"
	}, set: func(c *Config, v string) error {
		c.VIPChannel = true
		return setInt(&c.FastListenPort, v, 0, 65535)
	}},
	{name: "slaveTimeout", get: func(c *Config) string { return millis(orDefault(c.SlaveTimeout, 3*time.Second)) },
		set: func(c *Config, v string) error { return setMillis(&c.SlaveTimeout, v) }},
}

func init() {
	confKeys = append(confKeys, haConfKeys...)
}
