//! A `tracing` layer that keeps every closed span of feign-core with its fields, as an
//! OpenTelemetry exporter would see them.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// A span as it closed: its name and its fields.
#[derive(Debug, Clone, Default)]
pub struct ClosedSpan {
    /// The span's name: the call's route.
    pub name: String,
    /// Every field recorded on it, values as text.
    pub fields: BTreeMap<String, String>,
}

impl fmt::Display for ClosedSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "span \"{}\"", self.name)?;
        for (name, value) in &self.fields {
            write!(f, "\n    {name} = {value}")?;
        }
        Ok(())
    }
}

/// Collects the spans of target `feign_core`.
#[derive(Clone, Default)]
pub struct SpanCollector {
    open: Arc<Mutex<Vec<(Id, ClosedSpan)>>>,
    closed: Arc<Mutex<Vec<ClosedSpan>>>,
}

impl SpanCollector {
    /// The spans closed so far, oldest first.
    pub fn closed(&self) -> Vec<ClosedSpan> {
        self.closed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanCollector {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().target() != "feign_core" {
            return;
        }
        let mut span = ClosedSpan {
            name: attrs.metadata().name().to_owned(),
            fields: BTreeMap::new(),
        };
        attrs.record(&mut Fields(&mut span.fields));
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.push((id.clone(), span));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, span)) = open.iter_mut().find(|(i, _)| i == id) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = open.iter().position(|(i, _)| *i == id) {
            let (_, span) = open.swap_remove(index);
            let mut closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
            closed.push(span);
        }
    }
}
