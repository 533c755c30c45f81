//! What is emitted when the trait has mistakes: the errors, the user's trait and a stub client,
//! so code using them does not add dozens of unrelated errors to the real ones.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, ItemTrait, TraitItem};

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
    let client_type = expand::client_type(&client_ident, item, &krate, &meta, None);
    let stub_impl = stub_impl(item, &client_ident, &krate);
    let tokens = quote! {
        #errors
        #user_trait
        #client_type
        #stub_impl
    };
    expand::debug_print(&tokens);
    tokens
}

/// Implements the trait for the stub client with bodies that are never run, so code using the
/// client as the trait compiles; nothing when the trait's shape makes that impossible.
fn stub_impl(item: &ItemTrait, client_ident: &syn::Ident, krate: &TokenStream) -> TokenStream {
    let only_methods = item
        .items
        .iter()
        .all(|entry| matches!(entry, TraitItem::Fn(_)));
    if !item.generics.params.is_empty() || !only_methods {
        return TokenStream::new();
    }
    let methods = item.items.iter().filter_map(|entry| match entry {
        TraitItem::Fn(method) if method.default.is_none() => {
            let mut sig = method.sig.clone();
            for input in &mut sig.inputs {
                if let FnArg::Typed(typed) = input {
                    typed.attrs.clear();
                }
            }
            Some(quote!(#sig { ::core::unimplemented!() }))
        }
        _ => None,
    });
    let trait_ident = &item.ident;
    quote! {
        #[#krate::__private::async_trait]
        #[automatically_derived]
        #[allow(unused_variables, unreachable_code, clippy::unimplemented)]
        impl #trait_ident for #client_ident {
            #(#methods)*
        }
    }
}
