package dev.feignrs.bench;

import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.openfeign.EnableFeignClients;

/**
 * Drives {@link BenchClient} against static instances and prints one {@code JAVA_BENCH} line.
 *
 * <p>{@code --bench.targets=http://127.0.0.1:P1,http://127.0.0.1:P2} becomes the simple discovery
 * list {@code spring.cloud.discovery.client.simple.instances.bench[i].uri}, which Spring Cloud
 * LoadBalancer round-robins over.
 */
@SpringBootApplication
@EnableFeignClients
public class BenchApplication {
    static final String TARGETS = "--bench.targets=";

    public static void main(String[] args) {
        Map<String, Object> instances = new HashMap<>();
        for (String arg : args) {
            if (arg.startsWith(TARGETS)) {
                String[] uris = arg.substring(TARGETS.length()).split(",");
                for (int i = 0; i < uris.length; i++) {
                    instances.put("spring.cloud.discovery.client.simple.instances.bench[" + i + "].uri",
                            uris[i].trim());
                }
            }
        }
        if (instances.isEmpty()) {
            System.err.println("usage: java -jar feign-java-bench.jar --bench.targets=http://127.0.0.1:PORT[,...]"
                    + " [--bench.concurrency=N] [--bench.requests=M] [--bench.warmup=W]");
            System.exit(2);
        }
        SpringApplication app = new SpringApplication(BenchApplication.class);
        app.setDefaultProperties(instances);
        System.exit(SpringApplication.exit(app.run(args)));
    }
}
