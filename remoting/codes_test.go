package remoting

import "testing"

func TestCodeNames(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"send v2", RequestCodeName(SendMessageV2), "SEND_MESSAGE_V2"},
		{"pull", RequestCodeName(PullMessage), "PULL_MESSAGE"},
		{"route", RequestCodeName(GetRouteInfoByTopic), "GET_ROUTEINFO_BY_TOPIC"},
		{"heartbeat", RequestCodeName(34), "HEART_BEAT"},
		{"pop", RequestCodeName(200050), "POP_MESSAGE"},
		{"unknown request", RequestCodeName(9999), "9999"},
		{"success", ResponseCodeName(Success), "SUCCESS"},
		{"topic not exist", ResponseCodeName(17), "TOPIC_NOT_EXIST"},
		{"pull not found", ResponseCodeName(PullNotFound), "PULL_NOT_FOUND"},
		{"java spelling kept", ResponseCodeName(TransactionStateUnknown), "TRANSACTION_STATE_UNKNOW"},
		{"negative", ResponseCodeName(RPCTimeOut), "RPC_TIME_OUT"},
		{"unknown response", ResponseCodeName(-5), "-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
	if SendMessageV2 != 310 || PullMessage != 11 || Success != 0 || SystemError != 1 || GoAway != 1500 ||
		UpdateAndCreateACLConfigFailed != PollingFull {
		t.Fatal("code values")
	}
}
