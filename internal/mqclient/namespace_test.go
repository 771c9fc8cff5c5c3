package mqclient

import "testing"

func TestNamespace(t *testing.T) {
	tests := []struct {
		name, ns, in, wrapped, unwrapped, of string
	}{
		{"plain", "ns", "T", "ns%T", "T", ""},
		{"already wrapped", "ns", "ns%T", "ns%T", "T", "ns"},
		{"other namespace", "ns", "xx%T", "ns%xx%T", "xx%T", "xx"},
		{"retry", "ns", "%RETRY%G", "%RETRY%ns%G", "%RETRY%G", ""},
		{"retry wrapped", "ns", "%RETRY%ns%G", "%RETRY%ns%G", "%RETRY%G", "ns"},
		{"dlq", "ns", "%DLQ%G", "%DLQ%ns%G", "%DLQ%G", ""},
		{"dlq wrapped", "ns", "%DLQ%ns%G", "%DLQ%ns%G", "%DLQ%G", "ns"},
		{"system topic", "ns", "TBW102", "TBW102", "TBW102", ""},
		{"rmq_sys topic", "ns", "rmq_sys_TRACE", "rmq_sys_TRACE", "rmq_sys_TRACE", ""},
		{"system group", "ns", "CID_RMQ_SYS_TRANS", "CID_RMQ_SYS_TRANS", "CID_RMQ_SYS_TRANS", ""},
		{"no namespace", "", "T", "T", "T", ""},
		{"empty", "ns", "", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := WrapNamespace(tc.ns, tc.in); got != tc.wrapped {
				t.Errorf("WrapNamespace(%q, %q) = %q, want %q", tc.ns, tc.in, got, tc.wrapped)
			}
			if got := UnwrapNamespace(tc.ns, tc.in); got != tc.unwrapped {
				t.Errorf("UnwrapNamespace(%q, %q) = %q, want %q", tc.ns, tc.in, got, tc.unwrapped)
			}
			if got := UnwrapNamespace(tc.ns, WrapNamespace(tc.ns, tc.in)); tc.in != "" && got != tc.unwrapped && got != tc.in {
				t.Errorf("round trip of %q = %q", tc.in, got)
			}
			if got := NamespaceOf(tc.in); got != tc.of {
				t.Errorf("NamespaceOf(%q) = %q, want %q", tc.in, got, tc.of)
			}
		})
	}
	if got := RetryTopicOf("ns", "G"); got != "%RETRY%ns%G" {
		t.Errorf("RetryTopicOf = %q", got)
	}
}
