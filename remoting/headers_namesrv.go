package remoting

// NameServer headers (docs/PROTOCOL.md §3.15, §3.16, §3.17). Key order follows
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
	return hdrAppend(ext, h, getRouteInfoRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetRouteInfoRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getRouteInfoRequestFields)
}

var getRouteInfoRequestFields = hdrTableOf(func(h *GetRouteInfoRequestHeader, l *hdrList) {
	l.str("topic", &h.Topic)
	l.optBool("acceptStandardJsonOnly", &h.AcceptStandardJSONOnly)
})

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
	return hdrAppend(ext, h, registerBrokerRequestFields)
}

// FromExt implements CustomHeader.
func (h *RegisterBrokerRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, registerBrokerRequestFields)
}

var registerBrokerRequestFields = hdrTableOf(func(h *RegisterBrokerRequestHeader, l *hdrList) {
	l.optI64("heartbeatTimeoutMillis", &h.HeartbeatTimeoutMillis)
	l.optStr("__ZONE_NAME", &h.ZoneName)
	l.i64("brokerId", &h.BrokerID)
	l.i32Prim("bodyCrc32", &h.BodyCRC32)
	l.str("clusterName", &h.ClusterName)
	l.str("brokerAddr", &h.BrokerAddr)
	l.optBool("enableActingMaster", &h.EnableActingMaster)
	l.str("haServerAddr", &h.HAServerAddr)
	l.boolPrim("compressed", &h.Compressed)
	l.str("brokerName", &h.BrokerName)
})

// RegisterBrokerResponseHeader answers REGISTER_BROKER.
type RegisterBrokerResponseHeader struct {
	HAServerAddr *string
	MasterAddr   *string // only for slaves whose master is alive
}

// AppendExt implements CustomHeader.
func (h *RegisterBrokerResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, registerBrokerResponseFields)
}

// FromExt implements CustomHeader.
func (h *RegisterBrokerResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, registerBrokerResponseFields)
}

var registerBrokerResponseFields = hdrTableOf(func(h *RegisterBrokerResponseHeader, l *hdrList) {
	l.optStr("haServerAddr", &h.HAServerAddr)
	l.optStr("masterAddr", &h.MasterAddr)
})

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
	return hdrAppend(ext, h, brokerIdentityFields)
}

// FromExt implements CustomHeader.
func (h *BrokerIdentityHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, brokerIdentityFields)
}

var brokerIdentityFields = hdrTableOf(func(h *BrokerIdentityHeader, l *hdrList) {
	l.i64("brokerId", &h.BrokerID)
	l.str("clusterName", &h.ClusterName)
	l.str("brokerAddr", &h.BrokerAddr)
	l.str("brokerName", &h.BrokerName)
})

// QueryDataVersionResponseHeader answers QUERY_DATA_VERSION.
type QueryDataVersionResponseHeader struct {
	Changed bool
}

// AppendExt implements CustomHeader.
func (h *QueryDataVersionResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, queryDataVersionResponseFields)
}

// FromExt implements CustomHeader.
func (h *QueryDataVersionResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, queryDataVersionResponseFields)
}

var queryDataVersionResponseFields = hdrTableOf(func(h *QueryDataVersionResponseHeader, l *hdrList) {
	l.boolReq("changed", &h.Changed)
})

// PutKVConfigRequestHeader is PUT_KV_CONFIG (100).
type PutKVConfigRequestHeader struct {
	Namespace string
	Key       string
	Value     string
}

// AppendExt implements CustomHeader.
func (h *PutKVConfigRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, putKVConfigRequestFields)
}

// FromExt implements CustomHeader.
func (h *PutKVConfigRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, putKVConfigRequestFields)
}

var putKVConfigRequestFields = hdrTableOf(func(h *PutKVConfigRequestHeader, l *hdrList) {
	l.str("namespace", &h.Namespace)
	l.str("value", &h.Value)
	l.str("key", &h.Key)
})

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
	return hdrAppend(ext, h, kVConfigRequestFields)
}

// FromExt implements CustomHeader.
func (h *KVConfigRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, kVConfigRequestFields)
}

var kVConfigRequestFields = hdrTableOf(func(h *KVConfigRequestHeader, l *hdrList) {
	l.str("namespace", &h.Namespace)
	l.str("key", &h.Key)
})

// GetKVConfigResponseHeader answers GET_KV_CONFIG.
type GetKVConfigResponseHeader struct {
	Value *string
}

// AppendExt implements CustomHeader.
func (h *GetKVConfigResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getKVConfigResponseFields)
}

// FromExt implements CustomHeader.
func (h *GetKVConfigResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getKVConfigResponseFields)
}

var getKVConfigResponseFields = hdrTableOf(func(h *GetKVConfigResponseHeader, l *hdrList) {
	l.optStr("value", &h.Value)
})

// GetKVListByNamespaceRequestHeader is GET_KVLIST_BY_NAMESPACE (219).
type GetKVListByNamespaceRequestHeader struct {
	Namespace string
}

// AppendExt implements CustomHeader.
func (h *GetKVListByNamespaceRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getKVListByNamespaceRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetKVListByNamespaceRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getKVListByNamespaceRequestFields)
}

var getKVListByNamespaceRequestFields = hdrTableOf(func(h *GetKVListByNamespaceRequestHeader, l *hdrList) {
	l.str("namespace", &h.Namespace)
})

// DeleteTopicFromNamesrvRequestHeader is DELETE_TOPIC_IN_NAMESRV (216).
type DeleteTopicFromNamesrvRequestHeader struct {
	Topic       string
	ClusterName *string
}

// AppendExt implements CustomHeader.
func (h *DeleteTopicFromNamesrvRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, deleteTopicFromNamesrvRequestFields)
}

// FromExt implements CustomHeader.
func (h *DeleteTopicFromNamesrvRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, deleteTopicFromNamesrvRequestFields)
}

var deleteTopicFromNamesrvRequestFields = hdrTableOf(func(h *DeleteTopicFromNamesrvRequestHeader, l *hdrList) {
	l.optStr("clusterName", &h.ClusterName)
	l.str("topic", &h.Topic)
})

// GetTopicsByClusterRequestHeader is GET_TOPICS_BY_CLUSTER (224).
type GetTopicsByClusterRequestHeader struct {
	Cluster string
}

// AppendExt implements CustomHeader.
func (h *GetTopicsByClusterRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getTopicsByClusterRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetTopicsByClusterRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getTopicsByClusterRequestFields)
}

var getTopicsByClusterRequestFields = hdrTableOf(func(h *GetTopicsByClusterRequestHeader, l *hdrList) {
	l.str("cluster", &h.Cluster)
})

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
	return hdrAppend(ext, h, brokerNameRequestFields)
}

// FromExt implements CustomHeader.
func (h *BrokerNameRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, brokerNameRequestFields)
}

var brokerNameRequestFields = hdrTableOf(func(h *BrokerNameRequestHeader, l *hdrList) {
	l.str("brokerName", &h.BrokerName)
})

// WipeWritePermOfBrokerResponseHeader answers WIPE_WRITE_PERM_OF_BROKER.
type WipeWritePermOfBrokerResponseHeader struct {
	WipeTopicCount int32
}

// AppendExt implements CustomHeader.
func (h *WipeWritePermOfBrokerResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, wipeWritePermOfBrokerResponseFields)
}

// FromExt implements CustomHeader.
func (h *WipeWritePermOfBrokerResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, wipeWritePermOfBrokerResponseFields)
}

var wipeWritePermOfBrokerResponseFields = hdrTableOf(func(h *WipeWritePermOfBrokerResponseHeader, l *hdrList) {
	l.i32("wipeTopicCount", &h.WipeTopicCount)
})

// AddWritePermOfBrokerResponseHeader answers ADD_WRITE_PERM_OF_BROKER.
type AddWritePermOfBrokerResponseHeader struct {
	AddTopicCount int32
}

// AppendExt implements CustomHeader.
func (h *AddWritePermOfBrokerResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, addWritePermOfBrokerResponseFields)
}

// FromExt implements CustomHeader.
func (h *AddWritePermOfBrokerResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, addWritePermOfBrokerResponseFields)
}

var addWritePermOfBrokerResponseFields = hdrTableOf(func(h *AddWritePermOfBrokerResponseHeader, l *hdrList) {
	l.i32("addTopicCount", &h.AddTopicCount)
})
