package remoting

// NameServer headers (PROTOCOL.md §3.15, §3.16, §3.17). Key order follows
// Java's HashMap iteration (as captured where a capture exists).

// GetRouteInfoRequestHeader is GET_ROUTEINFO_BY_TOPIC (105).
type GetRouteInfoRequestHeader struct {
	Topic string
	// AcceptStandardJSONOnly asks for the standard JSON route form
	// (4.9.4+ and 5.x NameServers honour it).
	AcceptStandardJSONOnly *bool
}

// AppendExt implements CustomHeader.
func (h *GetRouteInfoRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrOptBool(ext, "acceptStandardJsonOnly", h.AcceptStandardJSONOnly)
	return ext
}

// FromExt implements CustomHeader.
func (h *GetRouteInfoRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = GetRouteInfoRequestHeader{
		Topic:                  r.str("topic"),
		AcceptStandardJSONOnly: r.optBool("acceptStandardJsonOnly"),
	}
	return r.err
}

// RegisterBrokerRequestHeader is REGISTER_BROKER (103).
type RegisterBrokerRequestHeader struct {
	BrokerName             string
	BrokerAddr             string
	ClusterName            string
	HAServerAddr           string
	BrokerID               int64
	HeartbeatTimeoutMillis *int64  // 5.x
	EnableActingMaster     *bool   // 5.x
	Compressed             bool    // body is the compressed form (RegisterBrokerBody.AppendCompressed)
	BodyCRC32              int32   // crc32(body) & 0x7FFFFFFF; 0 = unchecked
	ZoneName               *string // extField __ZONE_NAME, read by 5.x NameServers
}

// AppendExt implements CustomHeader.
func (h *RegisterBrokerRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrOptI64(ext, "heartbeatTimeoutMillis", h.HeartbeatTimeoutMillis)
	ext = hdrOptStr(ext, "__ZONE_NAME", h.ZoneName)
	ext = hdrI64(ext, "brokerId", h.BrokerID)
	ext = hdrI32(ext, "bodyCrc32", h.BodyCRC32)
	ext = hdrStr(ext, "clusterName", h.ClusterName)
	ext = hdrStr(ext, "brokerAddr", h.BrokerAddr)
	ext = hdrOptBool(ext, "enableActingMaster", h.EnableActingMaster)
	ext = hdrStr(ext, "haServerAddr", h.HAServerAddr)
	ext = hdrBool(ext, "compressed", h.Compressed)
	ext = hdrStr(ext, "brokerName", h.BrokerName)
	return ext
}

// FromExt implements CustomHeader.
func (h *RegisterBrokerRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = RegisterBrokerRequestHeader{
		BrokerName:             r.str("brokerName"),
		BrokerAddr:             r.str("brokerAddr"),
		ClusterName:            r.str("clusterName"),
		HAServerAddr:           r.str("haServerAddr"),
		BrokerID:               r.i64("brokerId"),
		HeartbeatTimeoutMillis: r.optI64("heartbeatTimeoutMillis"),
		EnableActingMaster:     r.optBool("enableActingMaster"),
		Compressed:             r.boolOr("compressed", false),
		BodyCRC32:              r.i32Or("bodyCrc32", 0),
		ZoneName:               r.optStr("__ZONE_NAME"),
	}
	return r.err
}

// RegisterBrokerResponseHeader answers REGISTER_BROKER.
type RegisterBrokerResponseHeader struct {
	HAServerAddr *string
	MasterAddr   *string // only for slaves whose master is alive
}

// AppendExt implements CustomHeader.
func (h *RegisterBrokerResponseHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrOptStr(ext, "haServerAddr", h.HAServerAddr)
	ext = hdrOptStr(ext, "masterAddr", h.MasterAddr)
	return ext
}

// FromExt implements CustomHeader.
func (h *RegisterBrokerResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = RegisterBrokerResponseHeader{
		HAServerAddr: r.optStr("haServerAddr"),
		MasterAddr:   r.optStr("masterAddr"),
	}
	return r.err
}

// BrokerIdentityHeader is the header of UNREGISTER_BROKER (104) and
// QUERY_DATA_VERSION (322).
type BrokerIdentityHeader struct {
	BrokerName  string
	BrokerAddr  string
	ClusterName string
	BrokerID    int64
}

// Java's names for BrokerIdentityHeader.
type (
	UnregisterBrokerRequestHeader = BrokerIdentityHeader
	QueryDataVersionRequestHeader = BrokerIdentityHeader
)

// AppendExt implements CustomHeader.
func (h *BrokerIdentityHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrI64(ext, "brokerId", h.BrokerID)
	ext = hdrStr(ext, "clusterName", h.ClusterName)
	ext = hdrStr(ext, "brokerAddr", h.BrokerAddr)
	ext = hdrStr(ext, "brokerName", h.BrokerName)
	return ext
}

// FromExt implements CustomHeader.
func (h *BrokerIdentityHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = BrokerIdentityHeader{
		BrokerName:  r.str("brokerName"),
		BrokerAddr:  r.str("brokerAddr"),
		ClusterName: r.str("clusterName"),
		BrokerID:    r.i64("brokerId"),
	}
	return r.err
}

// QueryDataVersionResponseHeader answers QUERY_DATA_VERSION.
type QueryDataVersionResponseHeader struct {
	Changed bool
}

// AppendExt implements CustomHeader.
func (h *QueryDataVersionResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrBool(ext, "changed", h.Changed)
}

// FromExt implements CustomHeader.
func (h *QueryDataVersionResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Changed = r.boolean("changed")
	return r.err
}

// PutKVConfigRequestHeader is PUT_KV_CONFIG (100).
type PutKVConfigRequestHeader struct {
	Namespace string
	Key       string
	Value     string
}

// AppendExt implements CustomHeader.
func (h *PutKVConfigRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "namespace", h.Namespace)
	ext = hdrStr(ext, "value", h.Value)
	ext = hdrStr(ext, "key", h.Key)
	return ext
}

// FromExt implements CustomHeader.
func (h *PutKVConfigRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = PutKVConfigRequestHeader{
		Namespace: r.str("namespace"),
		Key:       r.str("key"),
		Value:     r.str("value"),
	}
	return r.err
}

// KVConfigRequestHeader is the header of GET_KV_CONFIG (101) and
// DELETE_KV_CONFIG (102).
type KVConfigRequestHeader struct {
	Namespace string
	Key       string
}

// Java's names for KVConfigRequestHeader.
type (
	GetKVConfigRequestHeader    = KVConfigRequestHeader
	DeleteKVConfigRequestHeader = KVConfigRequestHeader
)

// AppendExt implements CustomHeader.
func (h *KVConfigRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "namespace", h.Namespace)
	ext = hdrStr(ext, "key", h.Key)
	return ext
}

// FromExt implements CustomHeader.
func (h *KVConfigRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = KVConfigRequestHeader{Namespace: r.str("namespace"), Key: r.str("key")}
	return r.err
}

// GetKVConfigResponseHeader answers GET_KV_CONFIG.
type GetKVConfigResponseHeader struct {
	Value *string
}

// AppendExt implements CustomHeader.
func (h *GetKVConfigResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrOptStr(ext, "value", h.Value)
}

// FromExt implements CustomHeader.
func (h *GetKVConfigResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Value = r.optStr("value")
	return r.err
}

// GetKVListByNamespaceRequestHeader is GET_KVLIST_BY_NAMESPACE (219).
type GetKVListByNamespaceRequestHeader struct {
	Namespace string
}

// AppendExt implements CustomHeader.
func (h *GetKVListByNamespaceRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrStr(ext, "namespace", h.Namespace)
}

// FromExt implements CustomHeader.
func (h *GetKVListByNamespaceRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Namespace = r.str("namespace")
	return r.err
}

// DeleteTopicFromNamesrvRequestHeader is DELETE_TOPIC_IN_NAMESRV (216).
type DeleteTopicFromNamesrvRequestHeader struct {
	Topic       string
	ClusterName *string
}

// AppendExt implements CustomHeader.
func (h *DeleteTopicFromNamesrvRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrOptStr(ext, "clusterName", h.ClusterName)
	ext = hdrStr(ext, "topic", h.Topic)
	return ext
}

// FromExt implements CustomHeader.
func (h *DeleteTopicFromNamesrvRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = DeleteTopicFromNamesrvRequestHeader{Topic: r.str("topic"), ClusterName: r.optStr("clusterName")}
	return r.err
}

// GetTopicsByClusterRequestHeader is GET_TOPICS_BY_CLUSTER (224).
type GetTopicsByClusterRequestHeader struct {
	Cluster string
}

// AppendExt implements CustomHeader.
func (h *GetTopicsByClusterRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrStr(ext, "cluster", h.Cluster)
}

// FromExt implements CustomHeader.
func (h *GetTopicsByClusterRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Cluster = r.str("cluster")
	return r.err
}

// BrokerNameRequestHeader is the header of WIPE_WRITE_PERM_OF_BROKER (205)
// and ADD_WRITE_PERM_OF_BROKER (327).
type BrokerNameRequestHeader struct {
	BrokerName string
}

// Java's names for BrokerNameRequestHeader.
type (
	WipeWritePermOfBrokerRequestHeader = BrokerNameRequestHeader
	AddWritePermOfBrokerRequestHeader  = BrokerNameRequestHeader
)

// AppendExt implements CustomHeader.
func (h *BrokerNameRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrStr(ext, "brokerName", h.BrokerName)
}

// FromExt implements CustomHeader.
func (h *BrokerNameRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.BrokerName = r.str("brokerName")
	return r.err
}

// WipeWritePermOfBrokerResponseHeader answers WIPE_WRITE_PERM_OF_BROKER.
type WipeWritePermOfBrokerResponseHeader struct {
	WipeTopicCount int32
}

// AppendExt implements CustomHeader.
func (h *WipeWritePermOfBrokerResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrI32(ext, "wipeTopicCount", h.WipeTopicCount)
}

// FromExt implements CustomHeader.
func (h *WipeWritePermOfBrokerResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.WipeTopicCount = r.i32("wipeTopicCount")
	return r.err
}

// AddWritePermOfBrokerResponseHeader answers ADD_WRITE_PERM_OF_BROKER.
type AddWritePermOfBrokerResponseHeader struct {
	AddTopicCount int32
}

// AppendExt implements CustomHeader.
func (h *AddWritePermOfBrokerResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrI32(ext, "addTopicCount", h.AddTopicCount)
}

// FromExt implements CustomHeader.
func (h *AddWritePermOfBrokerResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.AddTopicCount = r.i32("addTopicCount")
	return r.err
}
