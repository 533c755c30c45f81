package dev.feigneureka.interop;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;

/** A standalone Eureka server for interop tests; see application.yml for its test tuning. */
@SpringBootApplication
@EnableEurekaServer
public class EurekaTestServer {
    public static void main(String[] args) {
        exitWhenStdinCloses();
        SpringApplication.run(EurekaTestServer.class, args);
    }

    /**
     * With {@code -Dfeign.interop.exitOnStdinEof=true}, exits (running shutdown hooks) when stdin
     * reaches end of file: the launcher holds the write end, so the app never outlives the test
     * process, however that process ends.
     */
    static void exitWhenStdinCloses() {
        if (!Boolean.getBoolean("feign.interop.exitOnStdinEof")) {
            return;
        }
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // discard
                }
            } catch (java.io.IOException e) {
                // treat as closed
            }
            System.exit(0);
        }, "stdin-eof-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }
}
