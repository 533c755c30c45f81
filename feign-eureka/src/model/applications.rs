//! `Application` and `Applications` (the registry and its deltas), and the reconcile hash.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::instance::InstanceInfo;
use super::lenient::{
    checked_document, field_names, none_unless_map, LenientElement, LenientI64, LenientString,
    OneOrMany,
};
use super::status::InstanceStatus;

/// One application: its name and instances (`{"name":"APP","instance":[...]}`).
///
/// Always serialized with `instance` as an array. Read tolerantly: `instance` may be a single
/// object; an element that is not an object is skipped and counted in `skipped`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Application {
    /// The application name, upper-case.
    pub name: String,
    /// Its instances.
    pub instances: Vec<InstanceInfo>,
    /// How many `instance` elements were unreadable and left out (0 when built in code).
    pub skipped: usize,
}

impl Application {
    /// An application named `name` (upper-cased) with these instances.
    pub fn new(name: &str, instances: Vec<InstanceInfo>) -> Self {
        Application {
            name: name.to_ascii_uppercase(),
            instances,
            skipped: 0,
        }
    }

    /// Reads `{"application":{...}}`.
    pub fn from_json(json: &[u8]) -> Result<Application, serde_json::Error> {
        serde_json::from_str::<ApplicationEnvelope>(checked_document(json)?).map(|e| e.application)
    }

    /// Writes `{"application":{...}}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&ApplicationEnvelopeRef { application: self }).unwrap_or_default()
    }
}

impl Serialize for Application {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("instance", &self.instances)?;
        map.end()
    }
}

field_names!(ApplicationField { Name = "name", Instance = "instance" });

/// An application read with instances of type `T`: the model's [`InstanceInfo`], or a reader's
/// own instance type (the client keeps each instance's text to read it only when it changed).
pub(crate) struct AppListing<T> {
    /// The application name, upper-case.
    pub(crate) name: String,
    pub(crate) instances: Vec<T>,
    /// How many `instance` elements were unreadable and left out.
    pub(crate) skipped: usize,
}

struct ApplicationVisitor<T>(PhantomData<T>);

impl<'de, T: LenientElement<'de>> Visitor<'de> for ApplicationVisitor<T> {
    type Value = Option<AppListing<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an application object")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut app = AppListing {
            name: String::new(),
            instances: Vec::new(),
            skipped: 0,
        };
        while let Some(key) = map.next_key::<ApplicationField>()? {
            match key {
                ApplicationField::Name => {
                    let mut name = map.next_value::<LenientString>()?.0.unwrap_or_default();
                    name.make_ascii_uppercase();
                    app.name = name;
                }
                ApplicationField::Instance => {
                    let list = map.next_value::<OneOrMany<T>>()?;
                    app.instances = list.items;
                    app.skipped = list.skipped;
                }
                ApplicationField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(app))
    }

    none_unless_map!();
}

impl<'de, T: LenientElement<'de>> LenientElement<'de> for AppListing<T> {
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(ApplicationVisitor(PhantomData))
    }
}

impl From<AppListing<InstanceInfo>> for Application {
    fn from(app: AppListing<InstanceInfo>) -> Self {
        Application {
            name: app.name,
            instances: app.instances,
            skipped: app.skipped,
        }
    }
}

impl<'de> LenientElement<'de> for Application {
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(AppListing::<InstanceInfo>::deserialize_lenient(d)?.map(Application::from))
    }
}

impl<'de> Deserialize<'de> for Application {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Application::deserialize_lenient(d)?
            .ok_or_else(|| de::Error::custom("expected an application object"))
    }
}

/// A registry listing or a delta (`{"applications":{...}}`).
///
/// Serialized as Eureka does: `versions__delta` (a string), `apps__hashcode` (a string),
/// `application` (always an array). Read tolerantly: `versions__delta` as a number or string,
/// `application` as a single object, unreadable elements skipped and counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applications {
    /// `versions__delta`: `1` for full listings, the delta generation counter for deltas; `-1`
    /// when absent.
    pub versions_delta: i64,
    /// `apps__hashcode`: the reconcile hash of the whole registry (see
    /// [`Applications::reconcile_hash_code`]).
    pub apps_hashcode: String,
    /// The applications.
    pub applications: Vec<Application>,
    /// How many `application` elements were unreadable and left out.
    pub skipped: usize,
}

impl Default for Applications {
    fn default() -> Self {
        Applications {
            versions_delta: 1,
            apps_hashcode: String::new(),
            applications: Vec::new(),
            skipped: 0,
        }
    }
}

impl Applications {
    /// A listing of these applications with `versions__delta` 1 and the hash filled in by
    /// [`Applications::reconcile_hash_code`].
    pub fn new(applications: Vec<Application>) -> Self {
        let mut apps = Applications {
            applications,
            ..Applications::default()
        };
        apps.apps_hashcode = apps.reconcile_hash_code();
        apps
    }

    /// The reconcile hash of these applications, as Eureka's `Applications.getReconcileHashCode`
    /// computes it: instances of every application counted by status (every status, not only
    /// `UP`), statuses in lexicographic name order (`DOWN < OUT_OF_SERVICE < STARTING < UNKNOWN
    /// < UP`), each written `NAME_count_`, counts of zero left out. `""` for no instances, e.g.
    /// `"DOWN_1_UP_3_"`.
    ///
    /// Servers put this in `apps__hashcode` (of the whole registry, also in deltas); clients
    /// compare it with the hash of their local copy after applying a delta.
    pub fn reconcile_hash_code(&self) -> String {
        reconcile_hash(
            self.applications
                .iter()
                .flat_map(|a| a.instances.iter().map(|i| i.status)),
        )
    }

    /// The total number of instances.
    pub fn instance_count(&self) -> usize {
        self.applications.iter().map(|a| a.instances.len()).sum()
    }

    /// The application named `name` (case-insensitive).
    pub fn application(&self, name: &str) -> Option<&Application> {
        self.applications
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(name))
    }

    /// Reads `{"applications":{...}}`.
    pub fn from_json(json: &[u8]) -> Result<Applications, serde_json::Error> {
        read_listing::<InstanceInfo>(json).map(Applications::from)
    }

    /// Writes `{"applications":{...}}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&ApplicationsEnvelopeRef { applications: self }).unwrap_or_default()
    }
}

/// The reconcile hash of a set of instance statuses (see [`Applications::reconcile_hash_code`]).
pub fn reconcile_hash(statuses: impl IntoIterator<Item = InstanceStatus>) -> String {
    let mut counts = StatusCounts::default();
    for status in statuses {
        counts.add(status);
    }
    counts.hash_code()
}

/// Instance counts per status, from which the reconcile hash is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts {
    counts: [usize; 5],
}

impl StatusCounts {
    fn slot(status: InstanceStatus) -> usize {
        InstanceStatus::ALL
            .iter()
            .position(|s| *s == status)
            .unwrap_or(3)
    }

    /// Counts one more instance with `status`.
    pub fn add(&mut self, status: InstanceStatus) {
        self.counts[Self::slot(status)] += 1;
    }

    /// Counts one fewer instance with `status` (saturating at 0).
    pub fn remove(&mut self, status: InstanceStatus) {
        let slot = &mut self.counts[Self::slot(status)];
        *slot = slot.saturating_sub(1);
    }

    /// How many instances have `status`.
    pub fn count(&self, status: InstanceStatus) -> usize {
        self.counts[Self::slot(status)]
    }

    /// The reconcile hash, e.g. `"DOWN_1_UP_3_"`.
    pub fn hash_code(&self) -> String {
        let mut out = String::new();
        for (status, count) in InstanceStatus::ALL.iter().zip(self.counts) {
            if count > 0 {
                out.push_str(status.as_str());
                out.push('_');
                out.push_str(&count.to_string());
                out.push('_');
            }
        }
        out
    }
}

impl Serialize for Applications {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("versions__delta", &self.versions_delta.to_string())?;
        map.serialize_entry("apps__hashcode", &self.apps_hashcode)?;
        map.serialize_entry("application", &self.applications)?;
        map.end()
    }
}

field_names!(ApplicationsField {
    VersionsDelta = "versions__delta",
    HashCode = "apps__hashcode",
    Application = "application",
});

/// A listing read with instances of type `T` (see [`AppListing`]); the fields of
/// [`Applications`].
pub(crate) struct Listing<T> {
    pub(crate) versions_delta: i64,
    pub(crate) apps_hashcode: String,
    pub(crate) applications: Vec<AppListing<T>>,
    pub(crate) skipped: usize,
}

impl<'de, T: LenientElement<'de>> Deserialize<'de> for Listing<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: LenientElement<'de>> Visitor<'de> for V<T> {
            type Value = Option<Listing<T>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an applications object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut apps = Listing {
                    versions_delta: -1,
                    apps_hashcode: String::new(),
                    applications: Vec::new(),
                    skipped: 0,
                };
                while let Some(key) = map.next_key::<ApplicationsField>()? {
                    match key {
                        ApplicationsField::VersionsDelta => {
                            apps.versions_delta = map.next_value::<LenientI64>()?.0.unwrap_or(-1);
                        }
                        ApplicationsField::HashCode => {
                            apps.apps_hashcode =
                                map.next_value::<LenientString>()?.0.unwrap_or_default();
                        }
                        ApplicationsField::Application => {
                            let list = map.next_value::<OneOrMany<AppListing<T>>>()?;
                            apps.applications = list.items;
                            apps.skipped = list.skipped;
                        }
                        ApplicationsField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(apps))
            }
            none_unless_map!();
        }
        d.deserialize_any(V(PhantomData))?
            .ok_or_else(|| de::Error::custom("expected an applications object"))
    }
}

impl<'de> Deserialize<'de> for Applications {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Listing::<InstanceInfo>::deserialize(d).map(Applications::from)
    }
}

impl From<Listing<InstanceInfo>> for Applications {
    fn from(listing: Listing<InstanceInfo>) -> Self {
        Applications {
            versions_delta: listing.versions_delta,
            apps_hashcode: listing.apps_hashcode,
            applications: listing
                .applications
                .into_iter()
                .map(Application::from)
                .collect(),
            skipped: listing.skipped,
        }
    }
}

/// `{"applications":{...}}` read with instances of type `T`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "Listing<T>: Deserialize<'de>"))]
pub(super) struct ListingEnvelope<T> {
    pub(super) applications: Listing<T>,
}

/// Reads `{"applications":{...}}` with instances of type `T`, borrowing from `json` where `T`
/// does.
pub(crate) fn read_listing<'de, T>(json: &'de [u8]) -> Result<Listing<T>, serde_json::Error>
where
    Listing<T>: Deserialize<'de>,
{
    let text = checked_document(json)?;
    serde_json::from_str::<ListingEnvelope<T>>(text).map(|e| e.applications)
}

/// `{"application":{...}}`: the root wrapper of `GET apps/{APP}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ApplicationEnvelope {
    /// The wrapped application.
    pub application: Application,
}

/// `{"applications":{...}}`: the root wrapper of `GET apps`, `GET apps/delta` and VIP queries.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ApplicationsEnvelope {
    /// The wrapped listing.
    pub applications: Applications,
}

impl Serialize for ApplicationEnvelope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ApplicationEnvelopeRef {
            application: &self.application,
        }
        .serialize(serializer)
    }
}

impl Serialize for ApplicationsEnvelope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ApplicationsEnvelopeRef {
            applications: &self.applications,
        }
        .serialize(serializer)
    }
}

#[derive(Serialize)]
struct ApplicationEnvelopeRef<'a> {
    application: &'a Application,
}

#[derive(Serialize)]
struct ApplicationsEnvelopeRef<'a> {
    applications: &'a Applications,
}
