//! What is emitted when the trait has mistakes: the errors, the user's trait and a stub client,
//! so code using them does not add dozens of unrelated errors to the real ones.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemTrait;

use crate::attr;
use crate::ctxt::Ctxt;
use crate::expand;

/// The compile errors, the cleaned trait and a client type with no trait impl.
pub(crate) fn expand(args: TokenStream, item: &ItemTrait, errors: syn::Error) -> TokenStream {
    let errors = errors.into_compile_error();
    let args = attr::client_args(&Ctxt::new(), args);
    let krate = expand::krate(args.krate.as_ref());
    let user_trait = expand::user_trait(item, &krate);
    let client_ident = quote::format_ident!("{}Client", item.ident);
    let meta = expand::client_meta(&krate, &item.ident.to_string(), "", None, "");
    let client_type = expand::client_type(&client_ident, item, &krate, meta);
    let tokens = quote! {
        #errors
        #user_trait
        #client_type
    };
    expand::debug_print(&tokens);
    tokens
}
