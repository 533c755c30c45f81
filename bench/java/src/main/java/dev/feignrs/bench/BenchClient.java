package dev.feignrs.bench;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;

/** The declarative client under test, resolved through Spring Cloud LoadBalancer. */
@FeignClient("bench")
public interface BenchClient {
    @GetMapping("/orders/{id}")
    Order order(@PathVariable("id") long id);
}
