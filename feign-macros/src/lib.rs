//! The `#[feign_client]` attribute macro. Use it through `feign_core::feign_client`: the code it
//! generates reaches feign-core only through `::feign_core::__private` (and `::feign_core::Builder`).
//!
//! The macro works in four steps, one module each: `attr` parses the attributes, `ast` builds the
//! model of the trait (keeping every syntax node for spans), in which each method's return kind,
//! each parameter's role, value shape and body or part kind are decided once (`kind`, from the
//! recognisers of `ty`), `valid` checks it, one rule per function, and `expand` (with `double`
//! and `openapi`) generates the client from it. Every mistake is collected in a `Ctxt` and reported in one compile on the
//! token at fault; when there is any, `fallback` still emits the trait and a stub client so the
//! errors do not cascade through the rest of the crate.
//!
//! Set `FEIGN_MACROS_DEBUG=1` while building to print every expansion to stderr.

mod ast;
mod attr;
mod ctxt;
mod double;
mod expand;
mod fallback;
mod header;
mod kind;
mod openapi;
mod template;
mod ty;
mod valid;

use proc_macro::TokenStream;

/// Turns a trait into a typed async HTTP client named `{Trait}Client`.
///
/// ```ignore
/// #[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
/// #[headers("Accept: application/json")]
/// pub trait OrderService {
///     #[get("/orders/{id}")]
///     async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;
/// }
/// let orders = OrderServiceClient::builder().build()?;
/// ```
///
/// # On the trait
///
/// | Attribute | Meaning |
/// |---|---|
/// | `#[feign_client("name")]` | The service name (required); resolved by a load balancer when there is no URL |
/// | `url = "http://..."` | A fixed base URL; the builder's `.url()` overrides it |
/// | `path = "/api"` | A literal prefix of every method's path |
/// | `crate = "my::feign_core"` | Where generated code finds feign-core, for crates that re-export it |
/// | `fallback = Type` | A `Default` type implementing the same trait; answers calls that fail (5xx, timeout, connection), an open circuit breaker or a full bulkhead |
/// | `fallback_factory = Type` | A `Default` type implementing `feign_core::FallbackFactory<dyn Trait>`: makes the fallback from each failure's `Error` |
/// | `#[headers("Name: value", ...)]` | Headers of every method |
///
/// With feign-core's `test-double` feature, an object-safe trait also gets `{Trait}Double`, a
/// test double implementing it (see `feign_core::double`).
///
/// The trait gets `Send + Sync` supertraits and `async_trait`, so it is object safe
/// (`Arc<dyn OrderService>`) and its futures are `Send`. Doc comments and default methods are
/// kept; a method with a default body and no HTTP attribute is not generated.
///
/// # On a method
///
/// | Attribute | Meaning |
/// |---|---|
/// | `#[get("/orders/{id}")]`, `#[post]`, `#[put]`, `#[delete]`, `#[patch]`, `#[head]` | Method and path template; literal `?a=b` pairs may follow the path |
/// | `#[headers("Name: value", ...)]` | Headers of this method, after the trait's |
/// | `#[idempotent]` | Allows retrying a POST or PATCH |
/// | `#[options(connect_timeout_ms = .., read_timeout_ms = .., total_timeout_ms = .., follow_redirects = ..)]` | Per-method overrides of the client's options |
///
/// A method is `async fn`, takes `&self` and returns `Result<T, E>` where
/// `E: From<feign_core::Error>`. `T` decides the decoding: `()` drops the body, `String` and
/// `Bytes` take it as is, `Response` keeps status and headers, `ResponseEntity<X>` keeps them
/// beside the body decoded as `X`, `StreamingResponse` returns at the head and streams the body
/// unbuffered, `Option<X>` maps 404 to `None`, anything else goes through the client's Decoder
/// (JSON by default).
///
/// # On a parameter
///
/// | Attribute | Meaning |
/// |---|---|
/// | `#[path]`, `#[path("name")]` | Fills `{name}` as one percent-encoded segment (`Display`) |
/// | `#[query]`, `#[query("name")]` | One pair (`Display`); `Option` is omitted when `None`, `Vec`, slices and arrays give one pair per element |
/// | `#[query_map]` | Every field of a `Serialize` struct or map; `None` fields are omitted |
/// | `#[header("Name")]` | One header (`Display`); `Option` and collections as for `#[query]` |
/// | `#[header_map]` | Every entry of a map of headers |
/// | `#[body]` | The body: `String`, `&str`, `Vec<u8>`, `&[u8]` and `Bytes` as is, anything else through the Encoder (JSON by default) |
/// | `#[form]` | The body as `application/x-www-form-urlencoded` |
///
/// Every misuse is a compile error on the token at fault: a `{var}` with no parameter, a
/// `#[path]` parameter missing from its template, two bodies, a body on GET or HEAD, a method
/// that is not `async` or does not take `&self`, a return type that is not a `Result`, unknown
/// or repeated attributes and keys (a misspelled parameter or method attribute is told the one
/// it is nearest: "did you mean `#[query]`?"), a malformed header, a header the transport owns
/// (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`) and an absolute URL in a method
/// path.
#[proc_macro_attribute]
pub fn feign_client(args: TokenStream, input: TokenStream) -> TokenStream {
    let (args, item) = (
        proc_macro2::TokenStream::from(args),
        syn::parse_macro_input!(input as syn::ItemTrait),
    );
    expand::feign_client(args.clone(), &item)
        .unwrap_or_else(|errors| fallback::expand(args, &item, errors))
        .into()
}
