package dev.feigneureka.interop;

import java.util.List;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** A Spring Boot service that registers with Eureka and reports what it discovers. */
@SpringBootApplication
@RestController
public class JavaSvc {
    private final DiscoveryClient discovery;

    JavaSvc(DiscoveryClient discovery) {
        this.discovery = discovery;
    }

    public static void main(String[] args) {
        ExitWithLauncher.whenStdinCloses();
        SpringApplication.run(JavaSvc.class, args);
    }

    @GetMapping("/hello")
    String hello() {
        return "hello from java";
    }

    /** URIs of the instances of `serviceId` (looked up by vipAddress, case-insensitive). */
    @GetMapping("/peers/{serviceId}")
    List<String> peers(@PathVariable String serviceId) {
        return discovery.getInstances(serviceId).stream().map(i -> i.getUri().toString()).toList();
    }
}
