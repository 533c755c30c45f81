//! How many cases a property test runs.

/// The number of cases a property test runs: `PROPTEST_CASES` when set (a long run, e.g.
/// `PROPTEST_CASES=100000`), else `default`, which each test picks so that the whole workspace's
/// tests stay quick.
///
/// # Panics
///
/// When `PROPTEST_CASES` is set but is not a number: a long run that silently ran the default
/// would prove nothing.
pub fn proptest_cases(default: u32) -> u32 {
    match std::env::var("PROPTEST_CASES") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("PROPTEST_CASES={text:?} is not a number of cases")),
        Err(_) => default,
    }
}
