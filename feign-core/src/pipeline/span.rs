//! The `tracing` span of a call, named by its templated route (`GET /orders/{id}`).
//!
//! `tracing` takes span names from static callsites, one per macro invocation, so a name that
//! differs per client method needs a callsite per method: one is made (and leaked, like the
//! macros' statics) the first time a method is called while a subscriber listens at `INFO` for
//! target `feign_core`. Methods are `static`s compiled by the macro, so their number is bounded.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use tracing::callsite::{Callsite, Identifier};
use tracing::field::{FieldSet, Value};
use tracing::metadata::Kind;
use tracing::subscriber::Interest;
use tracing::{Level, Metadata, Span};

use crate::meta::{ClientMeta, MethodMeta};

/// Every field of a call span, set when the span opens or recorded as the call goes on.
/// OpenTelemetry's HTTP client conventions, plus the instance and the client method.
const FIELDS: &[&str] = &[
    "otel.name",
    "otel.kind",
    "otel.status_code",
    "http.request.method",
    "url.template",
    "server.address",
    "server.port",
    "http.response.status_code",
    "error.type",
    "http.request.resend_count",
    "feign.client",
    "feign.method_key",
    "feign.instance.id",
    "trace_id",
    "span_id",
];

/// The callsite of one client method's spans.
pub(super) struct RouteCallsite {
    metadata: OnceLock<Metadata<'static>>,
    interest: AtomicU8,
}

const NEVER: u8 = 0;
const SOMETIMES: u8 = 1;
const ALWAYS: u8 = 2;

impl Callsite for RouteCallsite {
    fn set_interest(&self, interest: Interest) {
        let value = if interest.is_never() {
            NEVER
        } else if interest.is_always() {
            ALWAYS
        } else {
            SOMETIMES
        };
        self.interest.store(value, Ordering::Relaxed);
    }

    fn metadata(&self) -> &Metadata<'_> {
        self.metadata
            .get()
            .expect("a route callsite's metadata is set before it is registered")
    }
}

impl RouteCallsite {
    /// Makes and registers the callsite of `meta`'s spans; `name` is its route without a query.
    pub(super) fn register(name: &'static str) -> &'static RouteCallsite {
        let callsite: &'static RouteCallsite = Box::leak(Box::new(RouteCallsite {
            metadata: OnceLock::new(),
            interest: AtomicU8::new(SOMETIMES),
        }));
        let _ = callsite.metadata.set(Metadata::new(
            name,
            "feign_core",
            Level::INFO,
            Some(file!()),
            Some(line!()),
            Some(module_path!()),
            FieldSet::new(FIELDS, Identifier(callsite)),
            Kind::SPAN,
        ));
        tracing::callsite::register(callsite);
        callsite
    }

    fn meta(&'static self) -> &'static Metadata<'static> {
        self.metadata
            .get()
            .expect("a route callsite's metadata is set before it is registered")
    }

    /// A new span of this route, or a disabled one when no subscriber wants it.
    pub(super) fn span(
        &'static self,
        client: &'static ClientMeta,
        meta: &'static MethodMeta,
        method: &'static str,
        template: &'static str,
    ) -> Span {
        let metadata = self.meta();
        let enabled = match self.interest.load(Ordering::Relaxed) {
            NEVER => false,
            ALWAYS => true,
            _ => tracing::dispatcher::get_default(|d| d.enabled(metadata)),
        };
        if !enabled {
            return Span::none();
        }
        let fields = metadata.fields();
        let field = |name: &str| fields.field(name);
        // Every name is in FIELDS, so each lookup finds its field.
        let (
            Some(name),
            Some(kind),
            Some(http_method),
            Some(url_template),
            Some(service),
            Some(key),
        ) = (
            field("otel.name"),
            field("otel.kind"),
            field("http.request.method"),
            field("url.template"),
            field("feign.client"),
            field("feign.method_key"),
        )
        else {
            return Span::none();
        };
        let values = [
            (&name, Some(&metadata.name() as &dyn Value)),
            (&kind, Some(&"client" as &dyn Value)),
            (&http_method, Some(&method as &dyn Value)),
            (&url_template, Some(&template as &dyn Value)),
            (&service, Some(&client.service as &dyn Value)),
            (&key, Some(&meta.key as &dyn Value)),
        ];
        Span::new(metadata, &fields.value_set(&values))
    }
}

/// Whether any subscriber could want `INFO` spans at all: one atomic load, so calls stay cheap
/// when tracing is off.
pub(super) fn maybe_enabled() -> bool {
    tracing::level_enabled!(Level::INFO)
}
