package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Requests the broker makes of its consumers on behalf of an admin (Java
// Broker2Client and AdminBrokerProcessor.callConsumer, docs/PROTOCOL.md
// §9.15). They are served on a worker, never on an event loop: the worker
// waits for the consumer's answer over the consumer's own connection, at
// most Config.ClientCallTimeout.

// defaultClientCallTimeout bounds a wait for a consumer's answer. Java's
// callClient allows 10 s, but the admin tools give up after 5 s, so a
// longer wait would only hold a worker for an answer nobody reads.
const defaultClientCallTimeout = 5 * time.Second

// Client versions (MQVersion ordinals) the consumer admin codes require.
const (
	versionV307Snapshot = 28 // RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_STATUS_FROM_CLIENT
	versionV318Snapshot = 62 // GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY
)

// oldVersionNames are the MQVersion names below V3_1_8_SNAPSHOT, the only
// ones a remark about a too old client can name.
var oldVersionNames = strings.Fields(`V3_0_0_SNAPSHOT V3_0_0_ALPHA1 V3_0_0_BETA1 V3_0_0_BETA2
	V3_0_0_BETA3 V3_0_0_BETA4 V3_0_0_BETA5 V3_0_0_BETA6_SNAPSHOT V3_0_0_BETA6 V3_0_0_BETA7_SNAPSHOT
	V3_0_0_BETA7 V3_0_0_BETA8_SNAPSHOT V3_0_0_BETA8 V3_0_0_BETA9_SNAPSHOT V3_0_0_BETA9 V3_0_0_FINAL
	V3_0_1_SNAPSHOT V3_0_1 V3_0_2_SNAPSHOT V3_0_2 V3_0_3_SNAPSHOT V3_0_3 V3_0_4_SNAPSHOT V3_0_4
	V3_0_5_SNAPSHOT V3_0_5 V3_0_6_SNAPSHOT V3_0_6 V3_0_7_SNAPSHOT V3_0_7 V3_0_8_SNAPSHOT V3_0_8
	V3_0_9_SNAPSHOT V3_0_9 V3_0_10_SNAPSHOT V3_0_10 V3_0_11_SNAPSHOT V3_0_11 V3_0_12_SNAPSHOT V3_0_12
	V3_0_13_SNAPSHOT V3_0_13 V3_0_14_SNAPSHOT V3_0_14 V3_0_15_SNAPSHOT V3_0_15 V3_1_0_SNAPSHOT V3_1_0
	V3_1_1_SNAPSHOT V3_1_1 V3_1_2_SNAPSHOT V3_1_2 V3_1_3_SNAPSHOT V3_1_3 V3_1_4_SNAPSHOT V3_1_4
	V3_1_5_SNAPSHOT V3_1_5 V3_1_6_SNAPSHOT V3_1_6 V3_1_7_SNAPSHOT V3_1_7`)

// oldVersionDesc is MQVersion.getVersionDesc for a version too old for a
// consumer admin code.
func oldVersionDesc(v int32) string {
	if v >= 0 && int(v) < len(oldVersionNames) {
		return oldVersionNames[v]
	}
	return strconv.Itoa(int(v))
}

// clientRequest is a request of code from the broker with the given
// header fields and body, as Java's createRequestCommand makes it.
func clientRequest(code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	req := remoting.NewRequest(code, ext, body)
	req.Language = remoting.LanguageJava
	req.Version = brokerVersion
	return req
}

// callConsumer forwards an admin's request to clientID of group and
// returns the consumer's response unchanged (AdminBrokerProcessor.callConsumer);
// the broker's own error answers are stamped as every other response.
func (b *Broker) callConsumer(ctx context.Context, code int32, ext remoting.ExtFields, body []byte, group, clientID string) *remoting.Command {
	resp, relayed := b.relayToConsumer(ctx, code, ext, body, group, clientID)
	if !relayed {
		return stamped(resp)
	}
	return resp
}

func (b *Broker) relayToConsumer(ctx context.Context, code int32, ext remoting.ExtFields, body []byte, group, clientID string) (*remoting.Command, bool) {
	ch, ok := b.clients.consumerChannel(group, clientID)
	if !ok {
		return remoting.NewResponse(remoting.SystemError, fmt.Sprintf("The Consumer <%s> <%s> not online", group, clientID)), false
	}
	if ch.version < versionV318Snapshot {
		return remoting.NewResponse(remoting.SystemError, fmt.Sprintf(
			"The Consumer <%s> Version <%s> too low to finish, please upgrade it to V3_1_8_SNAPSHOT", clientID, oldVersionDesc(ch.version))), false
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ClientCallTimeout)
	defer cancel()
	resp, err := ch.conn.Invoke(ctx, clientRequest(code, ext, body))
	if err != nil {
		b.log.Debug("call consumer", "code", code, "group", group, "client", clientID, "err", err)
		if errors.Is(err, server.ErrTimeout) {
			return remoting.NewResponse(remoting.ConsumeMsgTimeout, fmt.Sprintf("consumer <%s> <%s> Timeout: %v", group, clientID, err)), false
		}
		return remoting.NewResponse(remoting.SystemError, fmt.Sprintf("invoke consumer <%s> <%s> Exception: %v", group, clientID, err)), false
	}
	return resp, true
}

// stamped is resp stamped as the broker's own answer.
func stamped(resp *remoting.Command) *remoting.Command {
	stampResponse(resp)
	return resp
}
