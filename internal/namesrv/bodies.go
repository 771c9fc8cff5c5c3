package namesrv

import "github.com/go-rocketmq/rocketmq/remoting"

// Body helpers over the remoting JSON types. Everything but the route sent
// to new clients is written in fastjson's default form, as Java does.

func encodeKVTable(table map[string]string) []byte {
	kv := remoting.KVTable{Table: table}
	return kv.AppendJSON(nil, remoting.JSONFastjson)
}

func encodeTopicList(topics []string, brokerAddr string) []byte {
	if topics == nil {
		topics = []string{} // Java writes "topicList":[]
	}
	tl := remoting.TopicList{TopicList: topics, BrokerAddr: brokerAddr}
	return tl.AppendJSON(nil, remoting.JSONFastjson)
}

// decodeRegisterBrokerBody reads a RegisterBrokerBody in JSON or, when
// compressed, in the zlib form whose layout depends on the broker version.
func decodeRegisterBrokerBody(body []byte, compressed bool, brokerVersion int32) (registerBody, error) {
	var rb remoting.RegisterBrokerBody
	var err error
	if compressed {
		err = rb.DecodeCompressed(body, brokerVersion, 0)
	} else {
		err = rb.DecodeJSON(body)
	}
	if err != nil {
		return registerBody{}, err
	}
	out := fromWrapper(&rb.TopicConfigSerializeWrapper)
	out.Filters = rb.FilterServerList
	if out.Filters == nil {
		out.Filters = []string{} // Java's field default: clears the broker's filter servers
	}
	return out, nil
}

// decodeTopicConfigWrapper reads the body of a pre-3.0.11 registration.
func decodeTopicConfigWrapper(body []byte) (registerBody, error) {
	var w remoting.TopicConfigSerializeWrapper
	if err := w.DecodeJSON(body); err != nil {
		return registerBody{}, err
	}
	return fromWrapper(&w), nil
}

func fromWrapper(w *remoting.TopicConfigSerializeWrapper) registerBody {
	rb := registerBody{Version: w.DataVersion}
	rb.Topics = make([]topicConfig, 0, len(w.TopicConfigTable))
	for key, tc := range w.TopicConfigTable {
		name := tc.TopicName
		if name == "" {
			name = key
		}
		rb.Topics = append(rb.Topics, topicConfig{
			Name:           name,
			ReadQueueNums:  tc.ReadQueueNums,
			WriteQueueNums: tc.WriteQueueNums,
			Perm:           tc.Perm,
			TopicSysFlag:   tc.TopicSysFlag,
		})
	}
	return rb
}

func decodeDataVersion(body []byte) (remoting.DataVersion, error) {
	var v remoting.DataVersion
	err := v.DecodeJSON(body)
	return v, err
}

func encodeDataVersion(v remoting.DataVersion) []byte {
	return v.AppendJSON(nil, remoting.JSONFastjson)
}

// decodeRouteQueueDatas reads the queueDatas of a TopicRouteData body.
func decodeRouteQueueDatas(body []byte) ([]remoting.QueueData, error) {
	var rd remoting.TopicRouteData
	if err := rd.DecodeJSON(body); err != nil {
		return nil, err
	}
	return rd.QueueDatas, nil
}
