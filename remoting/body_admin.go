package remoting

import "github.com/go-rocketmq/rocketmq"

// ClusterInfo answers GET_BROKER_CLUSTER_INFO (106) (docs/PROTOCOL.md §4.8).
// Java always writes it in the fastjson form, even to 4.9.4+ clients.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData // broker name → replicas
	ClusterAddrTable map[string][]string   // cluster → broker names
}

// AppendJSON implements JSONBody.
func (c *ClusterInfo) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.key("brokerAddrTable")
	w.open()
	for _, name := range fjSortedKeys(c.BrokerAddrTable) {
		w.mapKeyStr(name)
		bd := c.BrokerAddrTable[name]
		bd.write(&w)
	}
	w.close()
	w.key("clusterAddrTable")
	fjWriteStrListMap(&w, c.ClusterAddrTable)
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (c *ClusterInfo) DecodeJSON(data []byte) error {
	*c = ClusterInfo{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "brokerAddrTable":
				c.BrokerAddrTable = fjReadStrMap(r, func() BrokerData {
					var bd BrokerData
					bd.decode(r)
					return bd
				})
			case "clusterAddrTable":
				c.ClusterAddrTable = fjReadStrListMap(r)
			default:
				r.skip()
			}
		})
	})
}

// TopicList is the body of GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
// GET_TOPICS_BY_CLUSTER and the system/unit topic lists (§4.9).
type TopicList struct {
	TopicList  []string
	BrokerAddr string // set only by GET_SYSTEM_TOPIC_LIST_FROM_NS
}

// AppendJSON implements JSONBody.
func (t *TopicList) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.fOptStr("brokerAddr", t.BrokerAddr)
	w.key("topicList")
	w.strList(t.TopicList)
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (t *TopicList) DecodeJSON(data []byte) error {
	*t = TopicList{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "topicList":
				t.TopicList = r.strList()
			case "brokerAddr":
				t.BrokerAddr = r.str()
			default:
				r.skip()
			}
		})
	})
}

// KVTable is a string map body: GET_KVLIST_BY_NAMESPACE, the
// ORDER_TOPIC_CONFIG table in REGISTER_BROKER responses, broker runtime info.
type KVTable struct {
	Table map[string]string
}

// AppendJSON implements JSONBody.
func (t *KVTable) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "table", func(w *fjWriter) { w.strMap(t.Table) })
}

// DecodeJSON implements JSONBody.
func (t *KVTable) DecodeJSON(data []byte) error {
	*t = KVTable{}
	return fjDecodeOneField(data, "table", func(r *fjReader) { t.Table = r.strMap() })
}

// GroupList answers QUERY_TOPIC_CONSUME_BY_WHO (300).
type GroupList struct {
	GroupList []string
}

// AppendJSON implements JSONBody.
func (g *GroupList) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "groupList", func(w *fjWriter) { w.strList(g.GroupList) })
}

// DecodeJSON implements JSONBody.
func (g *GroupList) DecodeJSON(data []byte) error {
	*g = GroupList{}
	return fjDecodeOneField(data, "groupList", func(r *fjReader) { g.GroupList = r.strList() })
}

// TopicStatsTable answers GET_TOPIC_STATS_INFO (202) (§4.10).
type TopicStatsTable struct {
	OffsetTable map[rocketmq.MessageQueue]TopicOffset
	TopicPutTps float64 // 5.x; written when non-zero
}

// TopicOffset is one queue's offset range.
type TopicOffset struct {
	MinOffset           int64
	MaxOffset           int64
	LastUpdateTimestamp int64
}

// AppendJSON implements JSONBody.
func (t *TopicStatsTable) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.key("offsetTable")
	fjWriteMQMap(&w, t.OffsetTable, func(o TopicOffset) {
		w.open()
		w.fI64("lastUpdateTimestamp", o.LastUpdateTimestamp)
		w.fI64("maxOffset", o.MaxOffset)
		w.fI64("minOffset", o.MinOffset)
		w.close()
	})
	if t.TopicPutTps != 0 {
		w.fF64("topicPutTps", t.TopicPutTps)
	}
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (t *TopicStatsTable) DecodeJSON(data []byte) error {
	*t = TopicStatsTable{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "offsetTable":
				t.OffsetTable = fjReadMQMap(r, func() TopicOffset {
					var o TopicOffset
					r.object(func(k []byte) {
						switch string(k) {
						case "minOffset":
							o.MinOffset = r.i64()
						case "maxOffset":
							o.MaxOffset = r.i64()
						case "lastUpdateTimestamp":
							o.LastUpdateTimestamp = r.i64()
						default:
							r.skip()
						}
					})
					return o
				})
			case "topicPutTps":
				t.TopicPutTps = r.f64()
			default:
				r.skip()
			}
		})
	})
}

// ConsumeStats answers GET_CONSUME_STATS (208).
type ConsumeStats struct {
	OffsetTable map[rocketmq.MessageQueue]OffsetWrapper
	ConsumeTps  float64
}

// OffsetWrapper is one queue's broker and consumer offsets.
type OffsetWrapper struct {
	BrokerOffset   int64
	ConsumerOffset int64
	PullOffset     int64 // 5.x; written when non-zero
	LastTimestamp  int64
}

// AppendJSON implements JSONBody.
func (c *ConsumeStats) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.fF64("consumeTps", c.ConsumeTps)
	w.key("offsetTable")
	fjWriteMQMap(&w, c.OffsetTable, func(o OffsetWrapper) {
		w.open()
		w.fI64("brokerOffset", o.BrokerOffset)
		w.fI64("consumerOffset", o.ConsumerOffset)
		w.fI64("lastTimestamp", o.LastTimestamp)
		if o.PullOffset != 0 {
			w.fI64("pullOffset", o.PullOffset)
		}
		w.close()
	})
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (c *ConsumeStats) DecodeJSON(data []byte) error {
	*c = ConsumeStats{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "consumeTps":
				c.ConsumeTps = r.f64()
			case "offsetTable":
				c.OffsetTable = fjReadMQMap(r, func() OffsetWrapper {
					var o OffsetWrapper
					r.object(func(k []byte) {
						switch string(k) {
						case "brokerOffset":
							o.BrokerOffset = r.i64()
						case "consumerOffset":
							o.ConsumerOffset = r.i64()
						case "pullOffset":
							o.PullOffset = r.i64()
						case "lastTimestamp":
							o.LastTimestamp = r.i64()
						default:
							r.skip()
						}
					})
					return o
				})
			default:
				r.skip()
			}
		})
	})
}

// Connection is one client channel as the broker records it.
type Connection struct {
	ClientID   string // key "clientId"
	ClientAddr string
	Language   string // LanguageCode name, e.g. "JAVA", "GO"
	Version    int32
}

func (c *Connection) write(w *fjWriter) {
	w.open()
	w.fStr("clientAddr", c.ClientAddr)
	w.fStr("clientId", c.ClientID)
	w.fOptStr("language", c.Language)
	w.fI32("version", c.Version)
	w.close()
}

func (c *Connection) decode(r *fjReader) {
	*c = Connection{}
	r.object(func(k []byte) {
		switch string(k) {
		case "clientId":
			c.ClientID = r.str()
		case "clientAddr":
			c.ClientAddr = r.str()
		case "language":
			c.Language = r.str()
		case "version":
			c.Version = r.i32()
		default:
			r.skip()
		}
	})
}

func fjWriteConns(w *fjWriter, conns []Connection) {
	fjWriteArr(w, len(conns), func(i int) { conns[i].write(w) })
}

func fjReadConns(r *fjReader) []Connection {
	var out []Connection
	fjReadArr(r, &out, (*Connection).decode)
	return out
}

// ConsumerConnection answers GET_CONSUMER_CONNECTION_LIST (203).
type ConsumerConnection struct {
	ConnectionSet     []Connection
	SubscriptionTable map[string]SubscriptionData // topic → subscription
	ConsumeType       string
	MessageModel      string
	ConsumeFromWhere  string
}

// AppendJSON implements JSONBody.
func (c *ConsumerConnection) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.key("connectionSet")
	fjWriteConns(&w, c.ConnectionSet)
	w.fOptStr("consumeFromWhere", c.ConsumeFromWhere)
	w.fOptStr("consumeType", c.ConsumeType)
	w.fOptStr("messageModel", c.MessageModel)
	w.key("subscriptionTable")
	w.open()
	for _, topic := range fjSortedKeys(c.SubscriptionTable) {
		w.mapKeyStr(topic)
		sd := c.SubscriptionTable[topic]
		sd.write(&w)
	}
	w.close()
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (c *ConsumerConnection) DecodeJSON(data []byte) error {
	*c = ConsumerConnection{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "connectionSet":
				c.ConnectionSet = fjReadConns(r)
			case "subscriptionTable":
				c.SubscriptionTable = fjReadStrMap(r, func() SubscriptionData {
					var sd SubscriptionData
					sd.decode(r)
					return sd
				})
			case "consumeType":
				c.ConsumeType = r.str()
			case "messageModel":
				c.MessageModel = r.str()
			case "consumeFromWhere":
				c.ConsumeFromWhere = r.str()
			default:
				r.skip()
			}
		})
	})
}

// ProducerConnection answers GET_PRODUCER_CONNECTION_LIST (204).
type ProducerConnection struct {
	ConnectionSet []Connection
}

// AppendJSON implements JSONBody.
func (p *ProducerConnection) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "connectionSet", func(w *fjWriter) { fjWriteConns(w, p.ConnectionSet) })
}

// DecodeJSON implements JSONBody.
func (p *ProducerConnection) DecodeJSON(data []byte) error {
	*p = ProducerConnection{}
	return fjDecodeOneField(data, "connectionSet", func(r *fjReader) { p.ConnectionSet = fjReadConns(r) })
}
