package remoting

// Config bodies a broker persists and serves (docs/PROTOCOL.md §10.6): they are
// JSON bodies of admin RPCs and the broker's config/*.json files. Java
// writes the files pretty-printed; readers accept any layout. Write them
// with JSONStandard, which a Java broker reads too.

// SubscriptionGroupConfig is one consumer group's broker-side settings.
type SubscriptionGroupConfig struct {
	GroupName                      string
	ConsumeEnable                  bool
	ConsumeFromMinEnable           bool
	ConsumeBroadcastEnable         bool
	RetryQueueNums                 int32
	RetryMaxTimes                  int32
	BrokerID                       int64
	WhichBrokerWhenConsumeSlowly   int64
	NotifyConsumerIdsChangedEnable bool
	// 5.x; written when non-zero / non-empty.
	ConsumeMessageOrderly bool
	GroupSysFlag          int32
	ConsumeTimeoutMinute  int32
	Attributes            map[string]string
	GroupRetryPolicy      []byte // raw JSON
}

// NewSubscriptionGroupConfig returns Java's defaults for group name
// (consume enabled, 1 retry queue, 16 retries, master, notify on changes).
func NewSubscriptionGroupConfig(name string) SubscriptionGroupConfig {
	return SubscriptionGroupConfig{
		GroupName:                      name,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		RetryQueueNums:                 1,
		RetryMaxTimes:                  16,
		BrokerID:                       MasterID,
		WhichBrokerWhenConsumeSlowly:   1,
		NotifyConsumerIdsChangedEnable: true,
	}
}

// AppendJSON implements JSONBody.
func (s *SubscriptionGroupConfig) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	s.write(&w)
	return w.b
}

// DecodeJSON implements JSONBody.
func (s *SubscriptionGroupConfig) DecodeJSON(data []byte) error { return fjDecode(data, s.decode) }

func (s *SubscriptionGroupConfig) write(w *fjWriter) {
	w.open()
	if len(s.Attributes) > 0 {
		w.key("attributes")
		w.strMap(s.Attributes)
	}
	w.fI64("brokerId", s.BrokerID)
	w.fBool("consumeBroadcastEnable", s.ConsumeBroadcastEnable)
	w.fBool("consumeEnable", s.ConsumeEnable)
	w.fBool("consumeFromMinEnable", s.ConsumeFromMinEnable)
	if s.ConsumeMessageOrderly {
		w.fBool("consumeMessageOrderly", true)
	}
	if s.ConsumeTimeoutMinute != 0 {
		w.fI32("consumeTimeoutMinute", s.ConsumeTimeoutMinute)
	}
	w.fStr("groupName", s.GroupName)
	w.fRaw("groupRetryPolicy", s.GroupRetryPolicy)
	if s.GroupSysFlag != 0 {
		w.fI32("groupSysFlag", s.GroupSysFlag)
	}
	w.fBool("notifyConsumerIdsChangedEnable", s.NotifyConsumerIdsChangedEnable)
	w.fI32("retryMaxTimes", s.RetryMaxTimes)
	w.fI32("retryQueueNums", s.RetryQueueNums)
	w.fI64("whichBrokerWhenConsumeSlowly", s.WhichBrokerWhenConsumeSlowly)
	w.close()
}

// decode starts from Java's defaults, so keys missing from older files
// keep them.
func (s *SubscriptionGroupConfig) decode(r *fjReader) {
	*s = NewSubscriptionGroupConfig("")
	r.object(func(k []byte) {
		switch string(k) {
		case "groupName":
			s.GroupName = r.str()
		case "consumeEnable":
			s.ConsumeEnable = r.bool()
		case "consumeFromMinEnable":
			s.ConsumeFromMinEnable = r.bool()
		case "consumeBroadcastEnable":
			s.ConsumeBroadcastEnable = r.bool()
		case "consumeMessageOrderly":
			s.ConsumeMessageOrderly = r.bool()
		case "retryQueueNums":
			s.RetryQueueNums = r.i32()
		case "retryMaxTimes":
			s.RetryMaxTimes = r.i32()
		case "brokerId":
			s.BrokerID = r.i64()
		case "whichBrokerWhenConsumeSlowly":
			s.WhichBrokerWhenConsumeSlowly = r.i64()
		case "notifyConsumerIdsChangedEnable":
			s.NotifyConsumerIdsChangedEnable = r.bool()
		case "groupSysFlag":
			s.GroupSysFlag = r.i32()
		case "consumeTimeoutMinute":
			s.ConsumeTimeoutMinute = r.i32()
		case "attributes":
			s.Attributes = r.strMap()
		case "groupRetryPolicy":
			s.GroupRetryPolicy = fjCopy(r.raw())
		default:
			r.skip()
		}
	})
}

// SubscriptionGroupWrapper is subscriptionGroup.json and the
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG body.
type SubscriptionGroupWrapper struct {
	SubscriptionGroupTable map[string]SubscriptionGroupConfig
	DataVersion            DataVersion
	ForbiddenTable         []byte // 5.x, raw JSON
}

// AppendJSON implements JSONBody.
func (s *SubscriptionGroupWrapper) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.key("dataVersion")
	s.DataVersion.write(&w)
	w.fRaw("forbiddenTable", s.ForbiddenTable)
	w.key("subscriptionGroupTable")
	w.open()
	for _, name := range fjSortedKeys(s.SubscriptionGroupTable) {
		w.mapKeyStr(name)
		g := s.SubscriptionGroupTable[name]
		g.write(&w)
	}
	w.close()
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (s *SubscriptionGroupWrapper) DecodeJSON(data []byte) error {
	*s = SubscriptionGroupWrapper{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "dataVersion":
				s.DataVersion.decode(r)
			case "forbiddenTable":
				s.ForbiddenTable = fjCopy(r.raw())
			case "subscriptionGroupTable":
				s.SubscriptionGroupTable = fjReadStrMap(r, func() SubscriptionGroupConfig {
					var g SubscriptionGroupConfig
					g.decode(r)
					return g
				})
			default:
				r.skip()
			}
		})
	})
}

// ConsumerOffsetSerializeWrapper is consumerOffset.json and the
// GET_ALL_CONSUMER_OFFSET body: "topic@group" → queue id → next offset.
type ConsumerOffsetSerializeWrapper struct {
	OffsetTable map[string]map[int32]int64
	DataVersion *DataVersion // 5.x
}

// AppendJSON implements JSONBody.
func (c *ConsumerOffsetSerializeWrapper) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	fjWriteOptDataVersion(&w, c.DataVersion)
	w.key("offsetTable")
	w.open()
	for _, k := range fjSortedKeys(c.OffsetTable) {
		w.mapKeyStr(k)
		fjWriteInt32Map(&w, c.OffsetTable[k])
	}
	w.close()
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (c *ConsumerOffsetSerializeWrapper) DecodeJSON(data []byte) error {
	*c = ConsumerOffsetSerializeWrapper{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "offsetTable":
				c.OffsetTable = fjReadStrMap(r, func() map[int32]int64 { return fjReadInt32Map(r, r.i64) })
			case "dataVersion":
				c.DataVersion = fjReadOptDataVersion(r)
			default:
				r.skip()
			}
		})
	})
}

// DelayOffsetSerializeWrapper is delayOffset.json and the
// GET_ALL_DELAY_OFFSET body: delay level → next offset in queue level-1 of
// SCHEDULE_TOPIC_XXXX.
type DelayOffsetSerializeWrapper struct {
	OffsetTable map[int32]int64
	DataVersion *DataVersion // 5.x
}

// AppendJSON implements JSONBody.
func (d *DelayOffsetSerializeWrapper) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	fjWriteOptDataVersion(&w, d.DataVersion)
	w.key("offsetTable")
	fjWriteInt32Map(&w, d.OffsetTable)
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (d *DelayOffsetSerializeWrapper) DecodeJSON(data []byte) error {
	*d = DelayOffsetSerializeWrapper{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "offsetTable":
				d.OffsetTable = fjReadInt32Map(r, r.i64)
			case "dataVersion":
				d.DataVersion = fjReadOptDataVersion(r)
			default:
				r.skip()
			}
		})
	})
}
