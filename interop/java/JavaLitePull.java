import java.util.List;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

// JavaLitePull NAMESRV GROUP TOPIC WANT TIMEOUT_S: a DefaultLitePullConsumer
// subscribed to every tag from the first offset, committing after each
// poll, one line per message, until WANT messages or the timeout (exit 3).
public class JavaLitePull {
    public static void main(String[] args) throws Exception {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(args[1]);
        c.setNamesrvAddr(args[0]);
        c.setMqClientApiTimeout(Common.API_TIMEOUT_MS);
        c.setInstanceName(args[1]);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setAutoCommit(false);
        c.subscribe(args[2], "*");
        c.start();
        int want = Integer.parseInt(args[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[4]) * 1000;
        int n = 0;
        try {
            while (n < want && System.currentTimeMillis() < deadline) {
                List<MessageExt> msgs = c.poll(1000);
                for (MessageExt m : msgs) {
                    Common.emit(Common.message(m));
                    n++;
                }
                c.commitSync();
            }
        } finally {
            c.shutdown();
        }
        if (n < want) {
            System.err.println("timed out with " + n + " of " + want + " messages");
            System.exit(3);
        }
    }
}
