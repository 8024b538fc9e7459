// cpucost's Java client: java HttpLoop MODE N URL WARMUP WARMUP_S CPU_S LIMIT_S
//
// Sends WARMUP requests to URL + "warm" (for at most WARMUP_S seconds), then requests to
// URL until the JVM has spent CPU_S seconds of CPU on them (or N requests, or LIMIT_S
// seconds), with java.net.http.HttpClient over HTTP/1.1, and prints, as cpucost's
// loopResult JSON, the JVM's CPU during the measured loop:
// OperatingSystemMXBean.getProcessCpuTime, every thread (JIT compiler and GC included).
// On Linux, JDK 17 computes it from times(), in 10 ms clock ticks, hence a loop measured
// by its CPU; the sys share comes from /proc/self/stat, in the same ticks. MODE:
//   shared      one HttpClient, connections kept alive and reused
//   close       one HttpClient, each request with "Connection: close" (a restricted
//               header: needs -Djdk.httpclient.allowRestrictedHeaders=connection)
//   new-client  a new HttpClient per request (its own pool and selector thread)
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

public class HttpLoop {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        HttpClient shared = client();
        measure(args, args[2], url -> get(mode, shared, url));
    }

    // Getter makes one request to url and tells whether it got its answer; an
    // IOException is a failed request.
    interface Getter {
        boolean get(String url) throws Exception;
    }

    // measure runs the loop the usage above describes, with the arguments there,
    // sending the measured requests to target, and prints its loopResult JSON.
    static void measure(String[] args, String target, Getter get) throws Exception {
        String url = args[2];
        int n = Integer.parseInt(args[1]), warm = Integer.parseInt(args[3]);
        long warmLimit = seconds(args[4]), minCPU = seconds(args[5]), limit = seconds(args[6]);
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

    static HttpClient client() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    static boolean get(String mode, HttpClient shared, String url) throws InterruptedException {
        HttpClient c = mode.equals("new-client") ? client() : shared;
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5));
        if (mode.equals("close")) {
            b.header("Connection", "close");
        }
        try {
            HttpResponse<byte[]> r = c.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            return r.statusCode() == 200 && r.body().length > 0;
        } catch (IOException e) {
            return false;
        }
    }
}
