// cpucost's OkHttp and Apache HttpClient 5 client: java LibLoop MODE N URL WARMUP WARMUP_S CPU_S LIMIT_S
//
// As HttpLoop: WARMUP requests to URL + "warm" (for at most WARMUP_S seconds), then
// requests to URL until the JVM has spent CPU_S seconds of CPU on them (or N
// requests, or LIMIT_S seconds), one at a time, each answer read to its end, and
// prints cpucost's loopResult JSON with the JVM's CPU during the measured loop.
// MODE:
//   okhttp         one OkHttpClient, synchronous calls, connections kept alive
//   okhttp-close   the same, to URL + "close": the server answers each with
//                  Connection: close, so each request opens a connection
//   apache         one CloseableHttpClient from HttpClients.createDefault()
//   apache-close   the same, to URL + "close"
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;

public class LibLoop {
    interface Getter {
        boolean get(String url) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0], url = args[2];
        int n = Integer.parseInt(args[1]), warm = Integer.parseInt(args[3]);
        long warmLimit = seconds(args[4]), minCPU = seconds(args[5]), limit = seconds(args[6]);
        String target = mode.endsWith("-close") ? url + "close" : url;
        Getter get = mode.startsWith("okhttp") ? okhttp() : apache();
        long start = System.nanoTime();
        for (int i = 0; i < warm && System.nanoTime() - start < warmLimit; i++) {
            get.get(url + "warm");
        }
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long[] ticks0 = ticks();
        long cpu0 = os.getProcessCpuTime();
        start = System.nanoTime();
        int attempts = 0, failed = 0;
        while (attempts < n && os.getProcessCpuTime() - cpu0 < minCPU && System.nanoTime() - start < limit) {
            attempts++;
            boolean ok;
            try {
                ok = get.get(target);
            } catch (IOException e) {
                ok = false;
            }
            if (!ok) {
                failed++;
            }
        }
        long wall = System.nanoTime() - start, cpu = os.getProcessCpuTime() - cpu0;
        long[] ticks1 = ticks();
        long user = ticks1[0] - ticks0[0], sys = ticks1[1] - ticks0[1];
        double sysShare = user + sys > 0 ? (double) sys / (user + sys) : 0;
        System.out.printf("{\"n\":%d,\"failed\":%d,\"cpu_ns\":%d,\"wall_ns\":%d,\"sys_share\":%.3f}%n",
                attempts, failed, cpu, wall, sysShare);
        System.exit(0); // OkHttp's dispatcher and pool threads would keep the JVM up a minute
    }

    static Getter okhttp() {
        OkHttpClient client = new OkHttpClient.Builder().readTimeout(5, TimeUnit.SECONDS).build();
        return url -> {
            try (Response r = client.newCall(new Request.Builder().url(url).build()).execute()) {
                return r.code() == 200 && r.body().bytes().length > 0;
            }
        };
    }

    static Getter apache() {
        CloseableHttpClient client = HttpClients.createDefault();
        return url -> client.execute(new HttpGet(url),
                r -> r.getCode() == 200 && EntityUtils.toByteArray(r.getEntity()).length > 0);
    }

    static long seconds(String s) {
        return (long) (Double.parseDouble(s) * 1e9);
    }

    // ticks is this process's user and system time in clock ticks (proc(5): fields 14, 15).
    static long[] ticks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
    }
}
