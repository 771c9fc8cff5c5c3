package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/javaprops"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetBrokerConfig serves GET_BROKER_CONFIG (26): the effective
// configuration as MixAll.properties2String writes it, and the
// configuration's DataVersion as JSON in the version header
// (AdminBrokerProcessor.getBrokerConfig).
func (b *Broker) handleGetBrokerConfig(context.Context, *server.Conn, *remoting.Command) *remoting.Command {
	text, version := b.conf.snapshot(b.Addr())
	resp := remoting.NewResponse(remoting.Success, "")
	h := remoting.GetBrokerConfigResponseHeader{Version: version}
	resp.Ext = h.AppendExt(remoting.ExtFields{})
	resp.Body = []byte(text)
	return resp
}

// ErrUnknownProperty reports a broker.conf key this broker does not read.
var ErrUnknownProperty = errors.New("rocketmq: unknown broker property")

// PropertyError reports a broker.conf value that does not parse.
type PropertyError struct {
	Key, Value string
	Err        error
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("rocketmq: broker property %s=%q: %v", e.Key, e.Value, e.Err)
}

func (e *PropertyError) Unwrap() error { return e.Err }

// confKey is one broker.conf key: how it is shown, how it is set and, for
// the keys UPDATE_BROKER_CONFIG applies at run time, how it goes live.
type confKey struct {
	name string
	get  func(c *Config) string
	set  func(c *Config, v string) error
	live func(s *brokerConf, c *Config) // nil: takes effect at the next start
}

// confKeys are the keys this broker reads, under Java 4.9.8's names
// (BrokerConfig, MessageStoreConfig, NettyServerConfig).
var confKeys = []confKey{
	{name: "brokerClusterName", get: func(c *Config) string { return c.ClusterName },
		set: func(c *Config, v string) error { return setName(&c.ClusterName, v) }},
	{name: "brokerName", get: func(c *Config) string { return c.BrokerName },
		set: func(c *Config, v string) error { return setName(&c.BrokerName, v) }},
	{name: "brokerId", get: func(c *Config) string { return strconv.FormatInt(c.BrokerID, 10) },
		set: func(c *Config, v string) error { return setInt(&c.BrokerID, v, 0, 1<<31-1) }},
	{name: "namesrvAddr", get: func(c *Config) string { return strings.Join(c.NameServers, ";") },
		set: setNameServers},
	{name: "listenPort", get: func(c *Config) string { _, p := splitHostPort(c.ListenAddr); return p },
		set: setListenPort},
	{name: "brokerIP1", get: func(c *Config) string { h, _ := splitHostPort(c.ListenAddr); return h },
		set: setBrokerIP1},
	{name: "storePathRootDir", get: func(c *Config) string { return c.StoreDir },
		set: func(c *Config, v string) error { return setName(&c.StoreDir, v) }},
	{name: "storePathCommitLog", get: storeSubdir("commitlog"), set: checkStoreSubdir("commitlog")},
	{name: "storePathConsumeQueue", get: storeSubdir("consumequeue"), set: checkStoreSubdir("consumequeue")},
	{name: "storePathIndex", get: storeSubdir("index"), set: checkStoreSubdir("index")},
	{name: "storeCheckpoint", get: storeSubdir("checkpoint"), set: checkStoreSubdir("checkpoint")},
	{name: "abortFile", get: storeSubdir("abort"), set: checkStoreSubdir("abort")},
	{name: "flushDiskType", get: func(c *Config) string {
		if c.FlushMode == store.FlushSync {
			return "SYNC_FLUSH"
		}
		return "ASYNC_FLUSH"
	}, set: func(c *Config, v string) error {
		switch v {
		case "ASYNC_FLUSH":
			c.FlushMode = store.FlushAsync
		case "SYNC_FLUSH":
			c.FlushMode = store.FlushSync
		default:
			return errors.New("want ASYNC_FLUSH or SYNC_FLUSH")
		}
		return nil
	}},
	{name: "autoCreateTopicEnable", get: func(c *Config) string { return strconv.FormatBool(!c.DisableAutoCreateTopic) },
		set:  func(c *Config, v string) error { return setNotBool(&c.DisableAutoCreateTopic, v) },
		live: func(s *brokerConf, c *Config) { s.autoCreateTopicOff.Store(c.DisableAutoCreateTopic) }},
	{name: "autoCreateSubscriptionGroup", get: func(c *Config) string { return strconv.FormatBool(!c.DisableAutoCreateGroup) },
		set:  func(c *Config, v string) error { return setNotBool(&c.DisableAutoCreateGroup, v) },
		live: func(s *brokerConf, c *Config) { s.autoCreateGroupOff.Store(c.DisableAutoCreateGroup) }},
	{name: "defaultTopicQueueNums", get: func(c *Config) string { return strconv.Itoa(int(c.DefaultTopicQueueNums)) },
		set: func(c *Config, v string) error { return setInt(&c.DefaultTopicQueueNums, v, 1, 1024) }},
	{name: "mappedFileSizeCommitLog", get: func(c *Config) string { return strconv.FormatInt(orDefault(c.CommitLogSegmentSize, 1<<30), 10) },
		set: func(c *Config, v string) error { return setInt(&c.CommitLogSegmentSize, v, 4096, 1<<31-1) }},
	{name: "mappedFileSizeConsumeQueue", get: func(c *Config) string {
		return strconv.Itoa(orDefault(c.ConsumeQueueEntries, 300000) * cqUnit)
	}, set: func(c *Config, v string) error {
		var n int
		if err := setInt(&n, v, cqUnit, 1<<31-1); err != nil {
			return err
		}
		c.ConsumeQueueEntries = (n + cqUnit - 1) / cqUnit // MessageStoreConfig rounds up to whole entries
		return nil
	}},
	{name: "maxMessageSize", get: func(c *Config) string { return strconv.Itoa(c.MaxMessageSize) },
		set: func(c *Config, v string) error { return setInt(&c.MaxMessageSize, v, 1, 1<<30) }},
	{name: "messageDelayLevel", get: func(c *Config) string { return c.DelayLevels },
		set: func(c *Config, v string) error {
			if _, err := parseDelayLevels(v); err != nil {
				return err
			}
			c.DelayLevels = v
			return nil
		}},
	{name: "flushIntervalCommitLog", get: func(c *Config) string {
		return strconv.FormatInt(orDefault(c.FlushInterval, 500*time.Millisecond).Milliseconds(), 10)
	}, set: func(c *Config, v string) error { return setMillis(&c.FlushInterval, v) }},
	{name: "transactionCheckInterval", get: func(c *Config) string { return millis(c.TransactionCheckInterval) },
		set: func(c *Config, v string) error { return setMillis(&c.TransactionCheckInterval, v) }},
	{name: "transactionTimeOut", get: func(c *Config) string { return millis(c.TransactionTimeout) },
		set:  func(c *Config, v string) error { return setMillis(&c.TransactionTimeout, v) },
		live: func(s *brokerConf, c *Config) { s.txTimeout.Store(int64(c.TransactionTimeout)) }},
	{name: "transactionCheckMax", get: func(c *Config) string { return strconv.Itoa(c.TransactionCheckMax) },
		set:  func(c *Config, v string) error { return setInt(&c.TransactionCheckMax, v, 1, 1<<31-1) },
		live: func(s *brokerConf, c *Config) { s.txCheckMax.Store(int64(c.TransactionCheckMax)) }},
	{name: "aclEnable", get: func(c *Config) string { return strconv.FormatBool(c.AclEnable) },
		set: func(c *Config, v string) error { return setBool(&c.AclEnable, v) }},
	{name: "enablePropertyFilter", get: func(c *Config) string { return strconv.FormatBool(c.EnablePropertyFilter) },
		set: func(c *Config, v string) error { return setBool(&c.EnablePropertyFilter, v) }},
	{name: "brokerPermission", get: func(c *Config) string { return strconv.Itoa(int(c.BrokerPermission)) },
		set:  func(c *Config, v string) error { return setInt(&c.BrokerPermission, v, 1, 7) },
		live: func(s *brokerConf, c *Config) { s.perm.Store(c.BrokerPermission) }},
	{name: "regionId", get: func(c *Config) string { return c.RegionID },
		set: func(c *Config, v string) error { return setName(&c.RegionID, v) }},
	// Read, checked and shown; no field of Config carries them.
	{name: "deleteWhen", get: func(c *Config) string {
		if c.DeleteWhen == "" {
			return "04"
		}
		return c.DeleteWhen
	},
		set: func(c *Config, v string) error {
			if err := checkDeleteWhen(v); err != nil {
				return err
			}
			c.DeleteWhen = v
			return nil
		}},
	{name: "fileReservedTime", get: func(c *Config) string {
		return strconv.FormatInt(int64(orDefault(c.FileReservedTime, 72*time.Hour)/time.Hour), 10)
	}, set: func(c *Config, v string) error {
		var h int64
		if err := setInt(&h, v, 1, 1<<31-1); err != nil {
			return err
		}
		c.FileReservedTime = time.Duration(h) * time.Hour
		return nil
	}},
	{name: "diskMaxUsedSpaceRatio", get: func(c *Config) string { return strconv.Itoa(orDefault(c.DiskMaxUsedSpaceRatio, 75)) },
		set: func(c *Config, v string) error {
			// A percent; MessageStoreConfig.getDiskMaxUsedSpaceRatio clamps it to 10..95.
			if err := setInt(&c.DiskMaxUsedSpaceRatio, v, 0, 100); err != nil {
				return err
			}
			c.DiskMaxUsedSpaceRatio = min(max(c.DiskMaxUsedSpaceRatio, 10), 95)
			return nil
		}},
	keptKey("flushCommitLogLeastPages", "4", intCheck(0, 1<<31-1)),
	keptKey("waitTimeMillsInSendQueue", "200", intCheck(0, 1<<31-1)),
}

// confAliases are the pre-4.4 spellings Java 4.9.8 no longer reads; users'
// files still carry them.
var confAliases = map[string]string{
	"mapedFileSizeCommitLog":    "mappedFileSizeCommitLog",
	"mapedFileSizeConsumeQueue": "mappedFileSizeConsumeQueue",
}

// confNoEffect are keys a Java broker.conf carries that this broker
// accepts without acting on them: its one listener (replication's keys are
// haconf.go's).
var confNoEffect = map[string]func(string) error{
	"checkTransactionMessageEnable": func(string) error { return nil },
}

const cqUnit = 20 // bytes of one consume-queue entry

// SetProperty sets the field behind the broker.conf key to value as Java's
// MixAll.properties2Object reads it. A key this broker does not read gives
// ErrUnknownProperty; noEffect reports a Java key accepted without
// effect here; a bad value gives an error naming the key.
func (c *Config) SetProperty(key, value string) (noEffect bool, err error) {
	if alias, ok := confAliases[key]; ok {
		key = alias
	}
	v := strings.TrimSpace(value)
	if check, ok := confNoEffect[key]; ok {
		if err := check(v); err != nil {
			return true, &PropertyError{Key: key, Value: value, Err: err}
		}
		return true, nil
	}
	for _, k := range confKeys {
		if k.name == key {
			if err := k.set(c, v); err != nil {
				return false, &PropertyError{Key: key, Value: value, Err: err}
			}
			return false, nil
		}
	}
	return false, fmt.Errorf("%w %s", ErrUnknownProperty, key)
}

// Properties are the configuration's broker.conf keys and values, defaults
// filled in, as GET_BROKER_CONFIG shows them.
func (c Config) Properties() map[string]string {
	if d, err := c.withDefaults(); err == nil {
		c = d
	}
	m := make(map[string]string, len(confKeys))
	for _, k := range confKeys {
		m[k.name] = k.get(&c)
	}
	return m
}

// brokerConf is the configuration as GET_BROKER_CONFIG shows it and
// UPDATE_BROKER_CONFIG changes it, with the values read at run time.
type brokerConf struct {
	mu      sync.Mutex
	cfg     Config
	version remoting.DataVersion

	autoCreateTopicOff atomic.Bool
	autoCreateGroupOff atomic.Bool
	txTimeout          atomic.Int64 // time.Duration
	txCheckMax         atomic.Int64
	perm               atomic.Int32 // brokerPermission
}

func newBrokerConf(cfg Config) *brokerConf {
	s := &brokerConf{cfg: cfg, version: remoting.DataVersion{Timestamp: time.Now().UnixMilli()}}
	for _, k := range confKeys {
		if k.live != nil {
			k.live(s, &s.cfg)
		}
	}
	return s
}

// snapshot is the properties text and the version JSON; the port of addr,
// the bound address once started, replaces a configured port 0.
func (s *brokerConf) snapshot(addr string) (text, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.textLocked(addr), string(s.version.AppendJSON(nil, remoting.JSONFastjson))
}

// textLocked is the configuration as properties text, a configured port 0
// shown as the port of addr.
func (s *brokerConf) textLocked(addr string) string {
	m := s.cfg.Properties()
	if _, p := splitHostPort(addr); p != "" && m["listenPort"] == "0" {
		m["listenPort"] = p
	}
	return javaprops.Format(m)
}

// Values read at run time; a Broker made without New reads its Config.

func (b *Broker) autoCreateTopicOff() bool {
	if b.conf == nil {
		return b.cfg.DisableAutoCreateTopic
	}
	return b.conf.autoCreateTopicOff.Load()
}

func (b *Broker) autoCreateGroupOff() bool {
	if b.conf == nil {
		return b.cfg.DisableAutoCreateGroup
	}
	return b.conf.autoCreateGroupOff.Load()
}

func (b *Broker) brokerPermission() int32 {
	if b.conf == nil {
		return b.cfg.BrokerPermission
	}
	return b.conf.perm.Load()
}

func (b *Broker) transactionTimeout() time.Duration {
	if b.conf == nil {
		return b.cfg.TransactionTimeout
	}
	return time.Duration(b.conf.txTimeout.Load())
}

func (b *Broker) transactionCheckMax() int {
	if b.conf == nil {
		return b.cfg.TransactionCheckMax
	}
	return int(b.conf.txCheckMax.Load())
}

func keptKey(name, def string, check func(string) error) confKey {
	return confKey{name: name,
		get: func(c *Config) string {
			if v, ok := c.JavaProperties[name]; ok {
				return v
			}
			return def
		},
		set: func(c *Config, v string) error {
			if check != nil {
				if err := check(v); err != nil {
					return err
				}
			}
			m := make(map[string]string, len(c.JavaProperties)+1)
			for k, x := range c.JavaProperties {
				m[k] = x
			}
			m[name] = v
			c.JavaProperties = m
			return nil
		}}
}

func checkDeleteWhen(v string) error {
	for _, h := range strings.Split(v, ";") {
		n, err := strconv.Atoi(h)
		if err != nil || n < 0 || n > 23 {
			return errors.New("want hours 00..23 separated by ';'")
		}
	}
	return nil
}

func intCheck(lo, hi int64) func(string) error {
	return func(v string) error {
		var n int64
		return setInt(&n, v, lo, hi)
	}
}

func setName(dst *string, v string) error {
	if v == "" {
		return errors.New("empty")
	}
	*dst = v
	return nil
}

func setInt[T int | int32 | int64](dst *T, v string, lo, hi int64) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return errors.New("not an integer")
	}
	if n < lo || n > hi {
		return fmt.Errorf("out of range %d..%d", lo, hi)
	}
	*dst = T(n)
	return nil
}

func setMillis(dst *time.Duration, v string) error {
	var ms int64
	if err := setInt(&ms, v, 1, 1<<40); err != nil {
		return err
	}
	*dst = time.Duration(ms) * time.Millisecond
	return nil
}

func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// setBool takes "true" or "false" in any case; Java's Boolean.parseBoolean
// reads any other text as false, which hides typos, so it is refused.
func setBool(dst *bool, v string) error {
	switch strings.ToLower(v) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return errors.New("want true or false")
	}
	return nil
}

func setNotBool(dst *bool, v string) error {
	var on bool
	if err := setBool(&on, v); err != nil {
		return err
	}
	*dst = !on
	return nil
}

func setNameServers(c *Config, v string) error {
	var out []string
	for _, a := range strings.Split(v, ";") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("%q is no host:port", a)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return errors.New("no address")
	}
	c.NameServers = out
	return nil
}

func setListenPort(c *Config, v string) error {
	var p int
	if err := setInt(&p, v, 0, 65535); err != nil {
		return err
	}
	h, _ := splitHostPort(c.ListenAddr)
	if h == "" {
		h = "127.0.0.1"
	}
	c.ListenAddr = net.JoinHostPort(h, strconv.Itoa(p))
	return nil
}

// setBrokerIP1 makes brokerIP1 the listen host, so the bound address is the
// one published (Java listens on every interface and publishes brokerIP1).
func setBrokerIP1(c *Config, v string) error {
	if net.ParseIP(v) == nil {
		return errors.New("not an IP address")
	}
	_, p := splitHostPort(c.ListenAddr)
	if p == "" {
		p = "10911"
	}
	c.ListenAddr = net.JoinHostPort(v, p)
	return nil
}

func splitHostPort(addr string) (host, port string) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", ""
	}
	return h, p
}

func storeSubdir(sub string) func(c *Config) string {
	return func(c *Config) string { return filepath.Join(c.StoreDir, sub) }
}

// checkStoreSubdir accepts a store path only where this store keeps it,
// under storePathRootDir (Java's default layout).
func checkStoreSubdir(sub string) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		if filepath.Clean(v) != filepath.Join(c.StoreDir, sub) {
			return fmt.Errorf("only storePathRootDir/%s (%s) is supported", sub, filepath.Join(c.StoreDir, sub))
		}
		return nil
	}
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
