//! Compile-time checks of `#[feign_client]`: every misuse fails on the token at fault, with a
//! reviewed message in `ui/*.stderr`. Regenerate with `TRYBUILD=overwrite` and review.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/*.rs");
}
