package dev.feignrs.bench;

/** The small JSON object the benchmark server answers `GET /orders/{id}` with. */
public record Order(long id, String item, int quantity) {
}
