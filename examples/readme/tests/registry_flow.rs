//! The README's embedded-registry and Eureka snippets, pasted together: the first call through
//! discovery reaches the instance the snippet registered.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_snippets_pasted_together_call_on_the_first_try() {
    let order = readme_snippets::embedded_registry_and_eureka()
        .await
        .expect("the first call through the registry succeeds");
    assert_eq!(order, readme_snippets::Order { id: 1 });
}
