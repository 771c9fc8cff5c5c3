import com.alibaba.fastjson.JSON;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.common.message.MessageExt;

// Shared output helpers: every program prints one JSON object per line on
// stdout, which the Go test in this folder reads.
final class Common {
    // Calls wait this long: several JVMs start at once on a busy machine.
    static final int API_TIMEOUT_MS = 15000;

    private Common() {
    }

    // fastjson writes number keys unquoted, which is not JSON.
    static Map<String, Object> stringKeys(Map<?, ?> m) {
        Map<String, Object> o = new TreeMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            o.put(String.valueOf(e.getKey()), e.getValue());
        }
        return o;
    }

    static synchronized void emit(Map<String, Object> m) {
        System.out.println(JSON.toJSONString(m));
        System.out.flush();
    }

    static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static Map<String, Object> message(MessageExt m) {
        Map<String, Object> o = obj(
            "topic", m.getTopic(),
            "body", new String(m.getBody(), StandardCharsets.UTF_8),
            "tags", m.getTags(),
            "keys", m.getKeys(),
            "msgId", m.getMsgId(),
            "brokerName", m.getBrokerName(),
            "queueId", m.getQueueId(),
            "queueOffset", m.getQueueOffset(),
            "reconsumeTimes", m.getReconsumeTimes(),
            "storeTimestamp", m.getStoreTimestamp(),
            "bornTimestamp", m.getBornTimestamp(),
            "sysFlag", m.getSysFlag(),
            "properties", m.getProperties());
        return o;
    }
}
