package dev.feigneureka.interop;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;

/** A standalone Eureka server for interop tests; see application.yml for its test tuning. */
@SpringBootApplication
@EnableEurekaServer
public class EurekaTestServer {
    public static void main(String[] args) {
        ExitWithLauncher.whenStdinCloses();
        SpringApplication.run(EurekaTestServer.class, args);
    }
}
