package remoting

// TopicRouteData is the GET_ROUTEINFO_BY_TOPIC response body (docs/PROTOCOL.md
// §4.2). A NameServer imitating 4.9.8 sends JSONStandard to requests with
// version >= 401 or acceptStandardJsonOnly=true and JSONFastjson to the
// rest; every known client (Java fastjson, the official Go client's string
// parser, this package) reads both.
type TopicRouteData struct {
	OrderTopicConf    string // "brokerName:queueNum;…", empty when unset
	QueueDatas        []QueueData
	BrokerDatas       []BrokerData
	FilterServerTable map[string][]string // broker address → filter servers
	// TopicQueueMappingByBroker is the 5.x static-topic mapping, kept as
	// the raw JSON text it arrived in (nil when absent).
	TopicQueueMappingByBroker []byte
}

// versionV494 is MQVersion V4_9_4, from which a NameServer answers route
// queries in standard JSON.
const versionV494 = 401

// RouteStyle is the style a 4.9.4+ NameServer uses to answer a
// GET_ROUTEINFO_BY_TOPIC request: JSONStandard when the request's version is
// >= 401 or it set acceptStandardJsonOnly=true, JSONFastjson otherwise
// (the official Go client claims 317 and gets the fastjson form).
func RouteStyle(requestVersion int32, h *GetRouteInfoRequestHeader) JSONStyle {
	if requestVersion >= versionV494 || (h != nil && h.AcceptStandardJSONOnly != nil && *h.AcceptStandardJSONOnly) {
		return JSONStandard
	}
	return JSONFastjson
}

// QueueData is one broker's queues of a topic.
type QueueData struct {
	BrokerName     string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32 // PermName bits: 4 read, 2 write, 1 inherit
	TopicSysFlag   int32
}

// BrokerData is one broker name with all its replicas.
type BrokerData struct {
	Cluster     string
	BrokerName  string
	BrokerAddrs map[int64]string // broker id (0 = master) → ip:port
	// 5.x only; written when set, so a 4.9.8-style route stays identical.
	EnableActingMaster bool
	ZoneName           string
}

// MasterID is the broker id of a master.
const MasterID int64 = 0

// MasterAddr returns the master's address, or "" when there is none.
func (b BrokerData) MasterAddr() string { return b.BrokerAddrs[MasterID] }

// AppendJSON implements JSONBody.
func (t *TopicRouteData) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	t.write(&w)
	return w.b
}

// DecodeJSON implements JSONBody.
func (t *TopicRouteData) DecodeJSON(data []byte) error { return fjDecode(data, t.decode) }

func (t *TopicRouteData) write(w *fjWriter) {
	w.open()
	w.key("brokerDatas")
	fjWriteArr(w, len(t.BrokerDatas), func(i int) { t.BrokerDatas[i].write(w) })
	w.key("filterServerTable")
	fjWriteStrListMap(w, t.FilterServerTable)
	w.fOptStr("orderTopicConf", t.OrderTopicConf)
	w.key("queueDatas")
	fjWriteArr(w, len(t.QueueDatas), func(i int) { t.QueueDatas[i].write(w) })
	w.fRaw("topicQueueMappingByBroker", t.TopicQueueMappingByBroker)
	w.close()
}

func (t *TopicRouteData) decode(r *fjReader) {
	*t = TopicRouteData{}
	r.object(func(k []byte) {
		switch string(k) {
		case "orderTopicConf":
			t.OrderTopicConf = r.str()
		case "queueDatas":
			fjReadArr(r, &t.QueueDatas, (*QueueData).decode)
		case "brokerDatas":
			fjReadArr(r, &t.BrokerDatas, (*BrokerData).decode)
		case "filterServerTable":
			t.FilterServerTable = fjReadStrListMap(r)
		case "topicQueueMappingByBroker":
			t.TopicQueueMappingByBroker = fjCopy(r.raw())
		default:
			r.skip()
		}
	})
}

func (q *QueueData) write(w *fjWriter) {
	w.open()
	w.fStr("brokerName", q.BrokerName)
	w.fI32("perm", q.Perm)
	w.fI32("readQueueNums", q.ReadQueueNums)
	w.fI32("topicSysFlag", q.TopicSysFlag)
	w.fI32("writeQueueNums", q.WriteQueueNums)
	w.close()
}

func (q *QueueData) decode(r *fjReader) {
	*q = QueueData{}
	r.object(func(k []byte) {
		switch string(k) {
		case "brokerName":
			q.BrokerName = r.str()
		case "perm":
			q.Perm = r.i32()
		case "readQueueNums":
			q.ReadQueueNums = r.i32()
		case "topicSysFlag", "topicSynFlag": // 3.x spelled it topicSynFlag
			q.TopicSysFlag = r.i32()
		case "writeQueueNums":
			q.WriteQueueNums = r.i32()
		default:
			r.skip()
		}
	})
}

func (b *BrokerData) write(w *fjWriter) {
	w.open()
	w.key("brokerAddrs")
	w.open()
	for _, id := range fjSortedIntKeys(b.BrokerAddrs) {
		w.mapKeyInt(id)
		w.str(b.BrokerAddrs[id])
	}
	w.close()
	w.fStr("brokerName", b.BrokerName)
	w.fStr("cluster", b.Cluster)
	if b.EnableActingMaster {
		w.fBool("enableActingMaster", true)
	}
	w.fOptStr("zoneName", b.ZoneName)
	w.close()
}

func (b *BrokerData) decode(r *fjReader) {
	*b = BrokerData{}
	r.object(func(k []byte) {
		switch string(k) {
		case "cluster":
			b.Cluster = r.str()
		case "brokerName":
			b.BrokerName = r.str()
		case "brokerAddrs":
			b.BrokerAddrs = fjReadIntMap(r, r.str)
		case "enableActingMaster":
			b.EnableActingMaster = r.bool()
		case "zoneName":
			b.ZoneName = r.str()
		default:
			r.skip()
		}
	})
}

// fjReadIntMap reads a Map<Long,V>, keys bare ({0:…}) or quoted ({"0":…}).
func fjReadIntMap[V any](r *fjReader, val func() V) map[int64]V {
	var m map[int64]V
	r.object(func(k []byte) {
		id, ok := fjParseIntKey(k)
		if !ok {
			r.fail("bad integer map key " + string(k))
			return
		}
		if m == nil {
			m = map[int64]V{}
		}
		m[id] = val()
	})
	return m
}

// fjReadInt32Map is fjReadIntMap for Map<Integer,V>.
func fjReadInt32Map[V any](r *fjReader, val func() V) map[int32]V {
	var m map[int32]V
	r.object(func(k []byte) {
		id, ok := fjParseIntKey(k)
		if !ok || id != int64(int32(id)) {
			r.fail("bad integer map key " + string(k))
			return
		}
		if m == nil {
			m = map[int32]V{}
		}
		m[int32(id)] = val()
	})
	return m
}

func fjParseIntKey(k []byte) (int64, bool) {
	var n int64
	neg := false
	if len(k) > 0 && (k[0] == '-' || k[0] == '+') {
		neg = k[0] == '-'
		k = k[1:]
	}
	if len(k) == 0 || len(k) > 19 {
		return 0, false
	}
	for _, c := range k {
		if c < '0' || c > '9' {
			return 0, false
		}
		n2 := n*10 + int64(c-'0')
		if n2 < n {
			return 0, false
		}
		n = n2
	}
	if neg {
		n = -n
	}
	return n, true
}

func fjWriteStrListMap(w *fjWriter, m map[string][]string) {
	w.open()
	for _, k := range fjSortedKeys(m) {
		w.mapKeyStr(k)
		w.strList(m[k])
	}
	w.close()
}

func fjReadStrListMap(r *fjReader) map[string][]string {
	var m map[string][]string
	r.object(func(k []byte) {
		key := string(k)
		if m == nil {
			m = map[string][]string{}
		}
		m[key] = r.strList()
	})
	return m
}

// fjCopy detaches raw JSON from the input buffer.
func fjCopy(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
