//! The `#[feign_client]` attribute macro. Use it through `feign_core::feign_client`: the code it
//! generates calls `::feign_core::__private` and nothing else of feign-core.
//!
//! The macro works in four steps, one module each: [`attr`] parses the attributes, [`ast`]
//! builds the model of the trait, [`valid`] checks it and [`expand`] generates the client. Every
//! mistake is collected in a [`ctxt::Ctxt`] and reported in one compile on the token at fault;
//! when there is any, [`fallback`] still emits the trait and a stub client so the errors do not
//! cascade through the rest of the crate.
//!
//! Set `FEIGN_MACROS_DEBUG=1` while building to print every expansion to stderr.

mod ast;
mod attr;
mod ctxt;
mod expand;
mod fallback;
mod header;
mod template;
mod ty;
mod valid;

use proc_macro::TokenStream;

/// Turns a trait into a typed HTTP client named `{Trait}Client`; see feign-core's documentation.
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
