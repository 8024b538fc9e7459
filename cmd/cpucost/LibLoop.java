// cpucost's OkHttp and Apache HttpClient 5 client: java LibLoop MODE N URL WARMUP WARMUP_S CPU_S LIMIT_S
//
// As HttpLoop, whose measure it runs: WARMUP requests to URL + "warm" (for at most
// WARMUP_S seconds), then requests to URL until the JVM has spent CPU_S seconds of
// CPU on them (or N requests, or LIMIT_S seconds), one at a time, each answer read
// to its end, and prints cpucost's loopResult JSON with the JVM's CPU during the
// measured loop.
// MODE:
//   okhttp         one OkHttpClient, synchronous calls, connections kept alive
//   okhttp-close   the same, to URL + "close": the server answers each with
//                  Connection: close, so each request opens a connection
//   apache         one CloseableHttpClient from HttpClients.createDefault()
//   apache-close   the same, to URL + "close"
import java.util.concurrent.TimeUnit;

import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;

public class LibLoop {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String target = mode.endsWith("-close") ? args[2] + "close" : args[2];
        HttpLoop.measure(args, target, mode.startsWith("okhttp") ? okhttp() : apache());
        System.exit(0); // OkHttp's dispatcher and pool threads would keep the JVM up a minute
    }

    static HttpLoop.Getter okhttp() {
        OkHttpClient client = new OkHttpClient.Builder().readTimeout(5, TimeUnit.SECONDS).build();
        return url -> {
            try (Response r = client.newCall(new Request.Builder().url(url).build()).execute()) {
                return r.code() == 200 && r.body().bytes().length > 0;
            }
        };
    }

    static HttpLoop.Getter apache() {
        CloseableHttpClient client = HttpClients.createDefault();
        return url -> client.execute(new HttpGet(url),
                r -> r.getCode() == 200 && EntityUtils.toByteArray(r.getEntity()).length > 0);
    }
}
