//! Reading logs back, as text and as structured events.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::{Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// One `tracing` event as a [`Captured`] saw it.
#[derive(Clone, Debug)]
pub struct Event {
    /// When it was emitted, on tokio's clock: virtual time in tests that pause it.
    pub at: tokio::time::Instant,
    /// Its level.
    pub level: Level,
    /// Its target, by default the module that emitted it (`feign_eureka::client`...).
    pub target: String,
    /// Its message, empty when it has none.
    pub message: String,
    /// Every other field, by name, formatted with `Debug` (strings without quotes).
    pub fields: BTreeMap<String, String>,
}

/// The events and the text of a `tracing` subscriber, kept to be read back in tests.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    text: Arc<Mutex<Vec<u8>>>,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Captured {
    /// Installs, for the current thread until the guard drops, a `tracing` subscriber that
    /// captures every event (and, in the text, every span) at TRACE and above: formatted without
    /// colours, and as [`Event`]s.
    pub fn install() -> (Captured, tracing::subscriber::DefaultGuard) {
        let captured = Captured::default();
        let text = TextWriter(captured.text.clone());
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(move || text.clone())
                    .with_ansi(false),
            )
            .with(EventLayer(captured.events.clone()));
        (captured, tracing::subscriber::set_default(subscriber))
    }

    /// Everything written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.text.lock().expect("captured lock").clone()).expect("UTF-8 logs")
    }

    /// Every event so far, oldest first.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().expect("captured lock").clone()
    }

    /// The events at `level` whose message is `message`, oldest first.
    pub fn matching(&self, level: Level, message: &str) -> Vec<Event> {
        self.events()
            .into_iter()
            .filter(|e| e.level == level && e.message == message)
            .collect()
    }
}

/// Where the formatting layer writes.
#[derive(Clone)]
struct TextWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for TextWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("captured lock").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Keeps every event as an [`Event`].
struct EventLayer(Arc<Mutex<Vec<Event>>>);

impl<S: Subscriber> Layer<S> for EventLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let metadata = event.metadata();
        let mut kept = Event {
            at: tokio::time::Instant::now(),
            level: *metadata.level(),
            target: metadata.target().to_owned(),
            message: String::new(),
            fields: BTreeMap::new(),
        };
        event.record(&mut Fields(&mut kept));
        self.0.lock().expect("captured lock").push(kept);
    }
}

/// Reads an event's message and fields into an [`Event`].
struct Fields<'a>(&'a mut Event);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let value = format!("{value:?}");
        if field.name() == "message" {
            self.0.message = value;
        } else {
            self.0.fields.insert(field.name().to_owned(), value);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.record_debug(field, &format_args!("{value}"));
    }
}
