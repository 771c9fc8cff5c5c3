import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;

// JavaProducer NAMESRV GROUP TOPIC: every send kind of DefaultMQProducer,
// one line per message sent: sync (tags, keys, a user property), async,
// oneway, a batch, a delay level, a body the client compresses, and sends
// to queue 0 through a selector.
public class JavaProducer {
    public static void main(String[] args) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(args[1]);
        p.setNamesrvAddr(args[0]);
        p.setMqClientApiTimeout(Common.API_TIMEOUT_MS);
        p.setInstanceName(args[1]);
        p.setRetryTimesWhenSendFailed(4);
        p.setSendMsgTimeout(Common.API_TIMEOUT_MS);
        p.start();
        String topic = args[2];
        try {
            for (int i = 0; i < 3; i++) {
                Message m = new Message(topic, "TagA", "k-sync-" + i, ("sync-" + i).getBytes(StandardCharsets.UTF_8));
                m.putUserProperty("idx", String.valueOf(i));
                sent("sync", m, p.send(m));
            }
            for (int i = 0; i < 2; i++) {
                final Message m = new Message(topic, "TagB", ("async-" + i).getBytes(StandardCharsets.UTF_8));
                final CountDownLatch done = new CountDownLatch(1);
                final AtomicReference<Throwable> failed = new AtomicReference<>();
                p.send(m, new SendCallback() {
                    public void onSuccess(SendResult r) {
                        sent("async", m, r);
                        done.countDown();
                    }

                    public void onException(Throwable e) {
                        failed.set(e);
                        done.countDown();
                    }
                });
                if (!done.await(30, TimeUnit.SECONDS) || failed.get() != null) {
                    throw new IllegalStateException("async send failed", failed.get());
                }
            }
            Message ow = new Message(topic, "TagB", ("oneway-0").getBytes(StandardCharsets.UTF_8));
            p.sendOneway(ow);
            Common.emit(Common.obj("kind", "oneway", "body", "oneway-0"));
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                batch.add(new Message(topic, "TagC", "k-batch-" + i, ("batch-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            SendResult br = p.send(batch);
            String[] ids = br.getMsgId().split(",");
            for (int i = 0; i < batch.size(); i++) {
                Common.emit(Common.obj("kind", "batch", "body", "batch-" + i, "status", br.getSendStatus().name(),
                    "msgId", ids[i], "queueId", br.getMessageQueue().getQueueId(), "queueOffset", br.getQueueOffset() + i));
            }
            Message d = new Message(topic, "TagD", ("delay-0").getBytes(StandardCharsets.UTF_8));
            d.setDelayTimeLevel(1);
            sent("delay", d, p.send(d));
            StringBuilder big = new StringBuilder("big-0:");
            while (big.length() < 8000) {
                big.append("abcdefghij");
            }
            Message c = new Message(topic, "TagE", big.toString().getBytes(StandardCharsets.UTF_8));
            sent("compressed", c, p.send(c));
            for (int i = 0; i < 3; i++) {
                Message o = new Message(topic, "TagF", "order", ("order-" + i).getBytes(StandardCharsets.UTF_8));
                sent("orderly", o, p.send(o, (mqs, msg, arg) -> mqs.get(0), null));
            }
        } finally {
            p.shutdown();
        }
    }

    static void sent(String kind, Message m, SendResult r) {
        Common.emit(Common.obj("kind", kind, "body", new String(m.getBody(), StandardCharsets.UTF_8),
            "status", r.getSendStatus().name(), "msgId", r.getMsgId(), "offsetMsgId", r.getOffsetMsgId(),
            "brokerName", r.getMessageQueue().getBrokerName(), "queueId", r.getMessageQueue().getQueueId(),
            "queueOffset", r.getQueueOffset()));
    }
}
