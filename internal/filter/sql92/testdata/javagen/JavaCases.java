import java.io.*;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.rocketmq.filter.expression.*;
import org.apache.rocketmq.filter.parser.SelectorParser;

// Reads lines "enc(expr) [TAB enc(name)=enc(value)]..." and appends TAB
// compile result (ok|error) TAB value (TRUE|FALSE|NULL|ERROR|-).
public class JavaCases {
    static String dec(String s) throws Exception { return URLDecoder.decode(s, "UTF-8"); }
    public static void main(String[] args) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        String line;
        while ((line = r.readLine()) != null) {
            String[] f = line.split("\t", -1);
            String expr = dec(f[0]);
            final Map<String, Object> props = new HashMap<>();
            for (int i = 1; i < f.length; i++) {
                int eq = f[i].indexOf('=');
                props.put(dec(f[i].substring(0, eq)), dec(f[i].substring(eq + 1)));
            }
            String comp, val = "-";
            BooleanExpression e = null;
            try {
                e = SelectorParser.parse(expr);
                comp = "ok";
            } catch (Throwable t) {
                comp = "error";
            }
            if (e != null) {
                try {
                    Object v = e.evaluate(new EvaluationContext() {
                        public Object get(String name) { return props.get(name); }
                        public Map<String, Object> keyValues() { return props; }
                    });
                    if (v == null) val = "NULL";
                    else if (v instanceof Boolean) val = ((Boolean) v) ? "TRUE" : "FALSE";
                    else val = "OTHER:" + v.getClass().getSimpleName();
                } catch (Throwable t) {
                    val = "ERROR";
                }
            }
            out.println(line + "\t" + comp + "\t" + val);
        }
        out.flush();
    }
}
