package dev.feignrs.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.stereotype.Component;

/**
 * Sends {@code warmup} then {@code requests} calls from {@code concurrency} threads, each thread
 * taking the next call as soon as its previous one returns (closed loop), and prints:
 *
 * <pre>JAVA_BENCH concurrency=N requests=M rps=R p50_us=A p99_us=B rss_kb=K peak_rss_kb=P errors=E</pre>
 *
 * Latency is measured around each measured call; rps is measured calls over the measured phase's
 * wall time; memory is read from /proc/self/status after the run. Exits 1 if any call failed.
 */
@Component
public class BenchRunner implements CommandLineRunner, ExitCodeGenerator {
    private final BenchClient client;
    private final int concurrency;
    private final int requests;
    private final int warmup;
    private int exitCode;

    BenchRunner(BenchClient client, @Value("${bench.concurrency}") int concurrency,
            @Value("${bench.requests}") int requests, @Value("${bench.warmup}") int warmup) {
        if (concurrency < 1 || requests < 1 || warmup < 0) {
            throw new IllegalArgumentException("bench.concurrency and bench.requests must be >= 1, bench.warmup >= 0");
        }
        this.client = client;
        this.concurrency = concurrency;
        this.requests = requests;
        this.warmup = warmup;
    }

    @Override
    public void run(String... args) throws Exception {
        long warmupErrors = phase(warmup, null);
        long[] latencies = new long[requests];
        long started = System.nanoTime();
        long errors = phase(requests, latencies);
        double seconds = (System.nanoTime() - started) / 1e9;

        Arrays.sort(latencies);
        System.out.printf("JAVA_BENCH concurrency=%d requests=%d rps=%.0f p50_us=%d p99_us=%d rss_kb=%d peak_rss_kb=%d errors=%d%n",
                concurrency, requests, requests / seconds, percentile(latencies, 50) / 1000,
                percentile(latencies, 99) / 1000, procStatusKb("VmRSS:"), procStatusKb("VmHWM:"),
                errors);
        System.out.flush();
        if (warmupErrors + errors > 0) {
            System.err.printf("%d warm-up and %d measured calls failed%n", warmupErrors, errors);
            exitCode = 1;
        }
    }

    /** Runs {@code total} calls; records each latency (ns) in {@code latencies} when given. Returns failures. */
    private long phase(int total, long[] latencies) throws InterruptedException {
        AtomicLong next = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < concurrency; t++) {
            Thread thread = new Thread(() -> {
                for (long i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
                    long start = System.nanoTime();
                    try {
                        Order order = client.order(i % 1000);
                        if (order == null || order.id() != i % 1000) {
                            errors.incrementAndGet();
                        }
                    } catch (RuntimeException e) {
                        if (errors.incrementAndGet() == 1) {
                            System.err.println("call failed: " + e);
                        }
                    }
                    if (latencies != null) {
                        latencies[(int) i] = System.nanoTime() - start;
                    }
                }
            }, "bench-" + t);
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        return errors.get();
    }

    private static long percentile(long[] sorted, int p) {
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    /** A `kB` field of /proc/self/status, or -1 where there is none. */
    private static long procStatusKb(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.substring(field.length()).replace("kB", "").trim());
                }
            }
        } catch (IOException | NumberFormatException e) {
            // fall through
        }
        return -1;
    }

    @Override
    public int getExitCode() {
        return exitCode;
    }
}
