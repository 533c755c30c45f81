//! The services a balancer knows, found by name on every pick without a lock and without
//! touching a shared reference count: an append-only table of write-once slots.

use std::sync::{Arc, Mutex, OnceLock};

use crate::service::ServiceLb;

/// Slots per chunk; a balancer usually serves a handful of services, so one chunk suffices.
const CHUNK: usize = 8;

/// Append-only list of services. Readers only load: each slot is written once and never
/// cleared, so a reader needs neither a lock nor a guard. Writers append under a mutex.
pub(crate) struct ServiceTable {
    head: Chunk,
    append: Mutex<()>,
}

struct Chunk {
    slots: [OnceLock<Arc<ServiceLb>>; CHUNK],
    next: OnceLock<Box<Chunk>>,
}

impl Chunk {
    fn new() -> Chunk {
        Chunk {
            slots: Default::default(),
            next: OnceLock::new(),
        }
    }
}

impl ServiceTable {
    pub(crate) fn new() -> ServiceTable {
        ServiceTable {
            head: Chunk::new(),
            append: Mutex::new(()),
        }
    }

    /// Every service, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<ServiceLb>> {
        let mut chunk = Some(&self.head);
        std::iter::from_fn(move || {
            let current = chunk?;
            chunk = current.next.get().map(|next| &**next);
            Some(current)
        })
        .flat_map(|c| c.slots.iter().map_while(OnceLock::get))
    }

    /// The service named `name` (case-insensitively), if known. Plain loops rather than
    /// [`ServiceTable::iter`]: this runs on every pick.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<ServiceLb>> {
        let mut chunk = &self.head;
        loop {
            for slot in &chunk.slots {
                let service = slot.get()?;
                if service.state.name.eq_ignore_ascii_case(name) {
                    return Some(service);
                }
            }
            chunk = chunk.next.get()?;
        }
    }

    /// The service named `name`, added with `create` if unknown; concurrent callers for the
    /// same name get the same service.
    pub(crate) fn get_or_add(
        &self,
        name: &str,
        create: impl FnOnce() -> ServiceLb,
    ) -> &Arc<ServiceLb> {
        if let Some(found) = self.get(name) {
            return found;
        }
        // A poisoned lock only means another append panicked; the table itself is consistent.
        let _writer = self.append.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = self.get(name) {
            return found;
        }
        let created = Arc::new(create());
        let mut chunk = &self.head;
        loop {
            if let Some(free) = chunk.slots.iter().find(|s| s.get().is_none()) {
                // Only writers set slots, one at a time, so this slot is still free.
                return free.get_or_init(|| created);
            }
            chunk = chunk.next.get_or_init(|| Box::new(Chunk::new()));
        }
    }
}
