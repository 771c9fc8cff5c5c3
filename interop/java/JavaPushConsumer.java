import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

// JavaPushConsumer NAMESRV GROUP TOPIC TAGS MODE WANT TIMEOUT_S: a
// DefaultMQPushConsumer from the first offset, MODE concurrent, orderly or
// broadcast, one line per delivery, until WANT deliveries or the timeout
// (exit 3). A body starting with "retry-" is given back once
// (RECONSUME_LATER), so it is delivered again from the retry topic.
public class JavaPushConsumer {
    public static void main(String[] args) throws Exception {
        final int want = Integer.parseInt(args[5]);
        final CountDownLatch got = new CountDownLatch(want);
        final Set<String> retried = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(args[1]);
        c.setNamesrvAddr(args[0]);
        c.setMqClientApiTimeout(Common.API_TIMEOUT_MS);
        c.setInstanceName(args[1]);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPersistConsumerOffsetInterval(200);
        c.subscribe(args[2], args[3]);
        String mode = args[4];
        if (mode.equals("broadcast")) {
            c.setMessageModel(MessageModel.BROADCASTING);
        }
        if (mode.equals("orderly")) {
            c.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    Common.emit(Common.message(m));
                    got.countDown();
                }
                return ConsumeOrderlyStatus.SUCCESS;
            });
        } else {
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    String body = new String(m.getBody(), StandardCharsets.UTF_8);
                    Common.emit(Common.message(m));
                    got.countDown();
                    if (body.startsWith("retry-") && retried.add(body)) {
                        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                    }
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
        }
        c.start();
        boolean ok = got.await(Long.parseLong(args[6]), TimeUnit.SECONDS);
        Thread.sleep(500); // let the last offsets be committed
        c.shutdown();
        if (!ok) {
            System.err.println("timed out with " + got.getCount() + " of " + want + " deliveries missing");
            System.exit(3);
        }
    }
}
