package dev.feigneureka.interop;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Spring Security's basic auth in front of every endpoint, as production Eureka servers often
 * run, when started with {@code --spring.profiles.active=basic-auth} and the user in
 * {@code spring.security.user.name} / {@code .password}. Without that profile the security
 * auto-configuration stays excluded (application.yml), so the server runs as before.
 * CSRF is off: Eureka clients send no CSRF token with their POST, PUT and DELETE requests.
 */
@Configuration
@EnableWebSecurity
@Profile("basic-auth")
public class FixtureSecurity {
    @Bean
    SecurityFilterChain basicAuth(HttpSecurity http) throws Exception {
        http.csrf(csrf -> csrf.disable())
            .authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
            .httpBasic(Customizer.withDefaults());
        return http.build();
    }
}
