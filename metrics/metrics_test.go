package metrics

import "testing"

var _ Hook = Nop{}

func TestLabels(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{OK.String(), "ok"}, {Error.String(), "error"}, {Retry.String(), "retry"}, {Result(9).String(), "unknown"},
		{Connected.String(), "connected"}, {DialFailed.String(), "dial_failed"}, {Closed.String(), "closed"}, {ConnEvent(9).String(), "unknown"},
	} {
		if tc.got != tc.want {
			t.Errorf("label %q, want %q", tc.got, tc.want)
		}
	}
}
