package rocketmq

import (
	"maps"
	"slices"
	"testing"
)

func TestCheckProperty(t *testing.T) {
	cases := []struct {
		name, k, v string
		want       error
	}{
		{"ok", "a", "b", nil},
		{"empty key", "", "b", ErrEmptyProperty},
		{"empty value", "a", "", ErrEmptyProperty},
		{"0x01 in key", "a\x01", "b", ErrPropertySeparator},
		{"0x02 in value", "a", "b\x02c", ErrPropertySeparator},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := CheckProperty(c.k, c.v); err != c.want {
				t.Errorf("CheckProperty(%q, %q) = %v, want %v", c.k, c.v, err, c.want)
			}
		})
	}
}

func TestMessageAccessors(t *testing.T) {
	m := &Message{Topic: "TopicTest", Body: []byte("hi")}
	if !m.WaitStoreMsgOK() || m.Property(PropertyWaitStoreMsgOK) != "" {
		t.Fatalf("WAIT absent does not read as true: %v", m.Properties)
	}
	m.SetTag("TagA")
	m.SetKeys("k1", "k2")
	m.SetDelayLevel(3)
	m.SetUniqKey("ID")
	m.SetWaitStoreMsgOK(false)
	want := map[string]string{"TAGS": "TagA", "KEYS": "k1 k2", "DELAY": "3", "UNIQ_KEY": "ID", "WAIT": "false"}
	if !maps.Equal(m.Properties, want) {
		t.Fatalf("properties %v, want %v", m.Properties, want)
	}
	if m.Tag() != "TagA" || !slices.Equal(m.Keys(), []string{"k1", "k2"}) || m.DelayLevel() != 3 ||
		m.UniqKey() != "ID" || m.WaitStoreMsgOK() {
		t.Fatalf("getters disagree: %q %q %d %q %v", m.Tag(), m.Keys(), m.DelayLevel(), m.UniqKey(), m.WaitStoreMsgOK())
	}
	m.SetTag("")
	m.SetKeys()
	m.SetDelayLevel(0)
	if _, ok := m.Properties[PropertyTags]; ok || m.Keys() != nil || m.DelayLevel() != 0 {
		t.Fatalf("clearing left %v", m.Properties)
	}
	if err := m.SetUserProperty(PropertyTags, "x"); err != ErrReservedProperty {
		t.Errorf("reserved TAGS: %v", err)
	}
	if err := m.SetUserProperty(" ", "x"); err != ErrEmptyProperty {
		t.Errorf("blank name: %v", err)
	}
	if err := m.SetUserProperty("a", "b\x01"); err != ErrPropertySeparator {
		t.Errorf("separator: %v", err)
	}
	if err := m.SetUserProperty("orderId", "1001"); err != nil || m.Property("orderId") != "1001" {
		t.Errorf("user property: %v", err)
	}
	m.DelProperty("orderId")
	if m.Property("orderId") != "" {
		t.Error("DelProperty kept the value")
	}

	var empty Message // nil map: getters read, setters allocate
	if !empty.WaitStoreMsgOK() || empty.Tag() != "" || empty.DelayLevel() != 0 {
		t.Error("zero Message getters")
	}
	empty.SetDeliverTimeMS(1700000000000)
	if empty.DeliverTimeMS() != 1700000000000 || empty.Property(PropertyTimerDeliverMS) != "1700000000000" {
		t.Errorf("deliver time: %v", empty.Properties)
	}
	empty.SetDelayTimeSec(5)
	empty.SetDelayTimeMS(1500)
	empty.SetShardingKey("sk")
	if empty.Property(PropertyTimerDelaySec) != "5" || empty.Property(PropertyTimerDelayMS) != "1500" || empty.ShardingKey() != "sk" {
		t.Errorf("timer properties: %v", empty.Properties)
	}
}

func TestMessageExtHelpers(t *testing.T) {
	m := &MessageExt{Message: Message{Topic: "%RETRY%GroupA", Properties: map[string]string{
		PropertyRetryTopic: "TopicTest", PropertyUniqKey: "U", PropertyTransactionPrepared: "true"}}, SysFlag: 0x4 | 0x1}
	if m.RealTopic() != "TopicTest" {
		t.Errorf("RealTopic %q", m.RealTopic())
	}
	if !m.TransactionPrepared() || m.TransactionID() != "U" {
		t.Errorf("transaction helpers: %v %q", m.TransactionPrepared(), m.TransactionID())
	}
	m.Properties[PropertyTransactionID] = "T"
	if m.TransactionID() != "T" {
		t.Errorf("TransactionID %q", m.TransactionID())
	}
	plain := &MessageExt{Message: Message{Topic: "TopicTest", Properties: map[string]string{PropertyRetryTopic: "X"}}}
	if plain.RealTopic() != "TopicTest" {
		t.Errorf("non-retry RealTopic %q", plain.RealTopic())
	}
}

func TestReservedProperties(t *testing.T) {
	for _, k := range []string{PropertyTags, PropertyKeys, PropertyUniqKey, PropertyWaitStoreMsgOK, PropertyDelayLevel,
		PropertyCluster, PropertyTimerDeliverMS, PropertyCRC32, PropertyMessageType, PropertyBornHost} {
		if !IsReservedProperty(k) {
			t.Errorf("%s not reserved", k)
		}
	}
	for _, k := range []string{"orderId", "", "tags", PropertyTransactionID, PropertyShardingKey} {
		if IsReservedProperty(k) {
			t.Errorf("%q reserved", k)
		}
	}
}
