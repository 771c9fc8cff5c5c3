import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.admin.ConsumeStats;
import org.apache.rocketmq.common.admin.OffsetWrapper;
import org.apache.rocketmq.common.admin.TopicOffset;
import org.apache.rocketmq.common.admin.TopicStatsTable;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.body.ClusterInfo;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.common.protocol.route.QueueData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;
import org.apache.rocketmq.common.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

// JavaAdmin NAMESRV TOPIC GROUP KEY: DefaultMQAdminExt calls against a
// cluster where TOPIC holds messages, some with KEY, and GROUP has committed
// offsets. One line per call: {"call": name, ...fields}. It creates and
// deletes TOPIC_NEW and GROUP_NEW on every master.
public class JavaAdmin {
    public static void main(String[] args) throws Exception {
        DefaultMQAdminExt a = new DefaultMQAdminExt();
        a.setNamesrvAddr(args[0]);
        a.setMqClientApiTimeout(Common.API_TIMEOUT_MS);
        a.setInstanceName("JavaAdmin" + System.nanoTime());
        a.start();
        String topic = args[1], group = args[2], key = args[3];
        try {
            ClusterInfo ci = a.examineBrokerClusterInfo();
            List<Object> brokers = new ArrayList<>();
            Set<String> masters = new HashSet<>();
            String cluster = null;
            for (Map.Entry<String, Set<String>> e : ci.getClusterAddrTable().entrySet()) {
                cluster = e.getKey();
                for (String bn : e.getValue()) {
                    BrokerData bd = ci.getBrokerAddrTable().get(bn);
                    brokers.add(Common.obj("cluster", e.getKey(), "brokerName", bn, "addrs", Common.stringKeys(bd.getBrokerAddrs())));
                    masters.add(bd.selectBrokerAddr());
                }
            }
            Common.emit(Common.obj("call", "clusterList", "brokers", brokers));

            TopicRouteData r = a.examineTopicRouteInfo(topic);
            List<Object> qds = new ArrayList<>();
            for (QueueData q : r.getQueueDatas()) {
                qds.add(Common.obj("brokerName", q.getBrokerName(), "readQueueNums", q.getReadQueueNums(),
                    "writeQueueNums", q.getWriteQueueNums(), "perm", q.getPerm()));
            }
            Common.emit(Common.obj("call", "topicRoute", "queueDatas", qds, "brokers", r.getBrokerDatas().size()));

            TopicStatsTable ts = a.examineTopicStats(topic);
            List<Object> qs = new ArrayList<>();
            for (Map.Entry<MessageQueue, TopicOffset> e : ts.getOffsetTable().entrySet()) {
                qs.add(Common.obj("brokerName", e.getKey().getBrokerName(), "queueId", e.getKey().getQueueId(),
                    "minOffset", e.getValue().getMinOffset(), "maxOffset", e.getValue().getMaxOffset()));
            }
            Common.emit(Common.obj("call", "topicStatus", "queues", qs));

            ConsumeStats cs = a.examineConsumeStats(group);
            List<Object> cqs = new ArrayList<>();
            for (Map.Entry<MessageQueue, OffsetWrapper> e : cs.getOffsetTable().entrySet()) {
                cqs.add(Common.obj("topic", e.getKey().getTopic(), "brokerName", e.getKey().getBrokerName(),
                    "queueId", e.getKey().getQueueId(), "brokerOffset", e.getValue().getBrokerOffset(),
                    "consumerOffset", e.getValue().getConsumerOffset()));
            }
            Common.emit(Common.obj("call", "consumerProgress", "queues", cqs, "diffTotal", cs.computeTotalDiff()));

            String addr = masters.iterator().next();
            Properties bc = a.getBrokerConfig(addr);
            Common.emit(Common.obj("call", "getBrokerConfig", "addr", addr, "brokerName", bc.getProperty("brokerName"),
                "brokerClusterName", bc.getProperty("brokerClusterName"), "brokerId", bc.getProperty("brokerId"),
                "autoCreateTopicEnable", bc.getProperty("autoCreateTopicEnable"), "count", bc.size()));

            long now = System.currentTimeMillis();
            QueryResult qr = a.queryMessage(topic, key, 32, 0, now + 3600_000L);
            List<Object> found = new ArrayList<>();
            for (MessageExt m : qr.getMessageList()) {
                found.add(Common.message(m));
            }
            Common.emit(Common.obj("call", "queryMsgByKey", "messages", found));
            if (!qr.getMessageList().isEmpty()) {
                MessageExt m = a.viewMessage(topic, qr.getMessageList().get(0).getMsgId());
                Common.emit(Common.obj("call", "queryMsgById", "message", Common.message(m)));
            }

            String newTopic = topic + "_NEW";
            for (String m : masters) {
                a.createAndUpdateTopicConfig(m, new TopicConfig(newTopic, 3, 3, 6));
            }
            TopicRouteData nr = null;
            for (int i = 0; i < 100 && nr == null; i++) {
                try {
                    nr = a.examineTopicRouteInfo(newTopic);
                } catch (Exception e) {
                    Thread.sleep(200);
                }
            }
            Common.emit(Common.obj("call", "updateTopic", "routed", nr != null,
                "queueDatas", nr == null ? 0 : nr.getQueueDatas().size(),
                "writeQueueNums", nr == null ? 0 : nr.getQueueDatas().get(0).getWriteQueueNums()));
            a.deleteTopicInBroker(masters, newTopic);
            a.deleteTopicInNameServer(new HashSet<>(Arrays.asList(args[0].split(";"))), newTopic, cluster);
            Common.emit(Common.obj("call", "deleteTopic", "listed", a.fetchAllTopicList().getTopicList().contains(newTopic)));

            String newGroup = group + "_NEW";
            SubscriptionGroupConfig g = new SubscriptionGroupConfig();
            g.setGroupName(newGroup);
            g.setRetryMaxTimes(5);
            g.setConsumeBroadcastEnable(false);
            a.createAndUpdateSubscriptionGroupConfig(addr, g);
            SubscriptionGroupConfig back = a.examineSubscriptionGroupConfig(addr, newGroup);
            Common.emit(Common.obj("call", "updateSubGroup", "groupName", back.getGroupName(),
                "retryMaxTimes", back.getRetryMaxTimes(), "consumeBroadcastEnable", back.isConsumeBroadcastEnable(),
                "retryQueueNums", back.getRetryQueueNums()));
            a.deleteSubscriptionGroup(addr, newGroup);
            boolean gone;
            try {
                gone = a.examineSubscriptionGroupConfig(addr, newGroup) == null;
            } catch (Exception e) {
                gone = true;
            }
            Common.emit(Common.obj("call", "deleteSubGroup", "gone", gone));
        } finally {
            a.shutdown();
        }
    }
}
