//! The settings `code` and `shell` share ([`ProgramsConfig`]: network, timeouts, jail, working
//! zone, limits), written beside each toolset's own keys under one key ([`Jailed`]).
//!
//! serde's `flatten` cannot be used here: it buffers the map, so errors lose their line, and it
//! does not work with `deny_unknown_fields`. [`Jailed`] reads the keys one by one instead, each
//! value where it stands: a shared key goes to [`ProgramsConfig`]'s own deserializer (so its
//! defaults and checks are written once, on its fields), every other key to the toolset's, and a
//! key neither knows is an unknown key at its own line, listing both sets of keys.

use std::any::TypeId;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::ToolsetConfig;
use crate::config::{
    DEFAULT_MAX_TIMEOUT_SECS, DEFAULT_TIMEOUT_SECS, JailMode, ProcessLimitsConfig,
    default_max_timeout, default_timeout, or_default, positive_max_secs, positive_secs,
};
use crate::jail::ProcessJail;
use crate::network::NetworkAccess;

/// How a toolset's programs run: the keys `code` and `shell` share.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgramsConfig {
    /// Whether programs may use the network, and which private networks (default: none).
    #[serde(default)]
    pub network: NetworkAccess,
    /// Wall-clock limit per run in seconds when the call names none (default 60, at least 1).
    #[serde(default = "default_timeout", deserialize_with = "positive_secs")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout: u64,
    /// The longest `timeout` a call may ask for (default 600, at least 1).
    #[serde(
        default = "default_max_timeout",
        deserialize_with = "positive_max_secs"
    )]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub max_timeout: u64,
    /// How strictly to jail (default `strict`).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<JailMode>")]
    pub jail: JailMode,
    /// The zone programs run in (default: the first `rw` zone, else the private `/tmp`).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Resource limits.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ProcessLimitsConfig>")]
    pub limits: ProcessLimitsConfig,
}

impl Default for ProgramsConfig {
    fn default() -> Self {
        Self {
            network: NetworkAccess::default(),
            timeout: DEFAULT_TIMEOUT_SECS,
            max_timeout: DEFAULT_MAX_TIMEOUT_SECS,
            jail: JailMode::Strict,
            workdir: None,
            limits: ProcessLimitsConfig::default(),
        }
    }
}

impl ProgramsConfig {
    /// The jail of the toolset `toolset` built from these settings.
    pub fn process_jail(&self, toolset: &'static str) -> ProcessJail<'_> {
        ProcessJail {
            toolset,
            mode_key: "jail",
            network: &self.network,
            jail: self.jail,
            limits: &self.limits,
            workdir: self.workdir.as_deref(),
            timeout: self.timeout,
            max_timeout: self.max_timeout,
        }
    }

    /// Takes the value of `key` (one of its own) from `other`.
    fn take(&mut self, key: &str, other: ProgramsConfig) {
        match key {
            "network" => self.network = other.network,
            "timeout" => self.timeout = other.timeout,
            "max_timeout" => self.max_timeout = other.max_timeout,
            "jail" => self.jail = other.jail,
            "workdir" => self.workdir = other.workdir,
            "limits" => self.limits = other.limits,
            _ => {}
        }
    }
}

/// A toolset's configuration that runs programs: its own keys (`T`, a struct with
/// `deny_unknown_fields`) and [`ProgramsConfig`]'s, side by side under the toolset's key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Jailed<T> {
    /// `network`, `timeout`, `max_timeout`, `jail`, `workdir` and `limits`.
    pub programs: ProgramsConfig,
    /// The toolset's own keys.
    pub own: T,
}

impl<T> ToolsetConfig for Jailed<T>
where
    T: DeserializeOwned
        + JsonSchema
        + fmt::Debug
        + Clone
        + PartialEq
        + Eq
        + Default
        + Send
        + Sync
        + 'static,
{
    /// No value: the defaults of both.
    fn empty() -> Result<Self, &'static str> {
        Ok(Jailed::default())
    }
}

impl<'de, T: Deserialize<'de> + 'static> Deserialize<'de> for Jailed<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let keys = keys_of::<T>();
        deserializer.deserialize_struct(
            "Jailed",
            keys.all,
            JailedVisitor {
                keys,
                own: PhantomData,
            },
        )
    }
}

/// The keys of `T` and of [`ProgramsConfig`], each list found once per type.
#[derive(Clone, Copy)]
struct Keys {
    own: &'static [&'static str],
    all: &'static [&'static str],
}

/// The keys of `Jailed<T>`: `T`'s, then [`ProgramsConfig`]'s.
fn keys_of<'de, T: Deserialize<'de> + 'static>() -> Keys {
    static FOUND: OnceLock<Mutex<HashMap<TypeId, Keys>>> = OnceLock::new();
    let found = FOUND.get_or_init(Mutex::default);
    let mut found = found
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *found.entry(TypeId::of::<T>()).or_insert_with(|| {
        let own = struct_keys::<T>();
        let shared = struct_keys::<ProgramsConfig>();
        debug_assert!(
            own.iter().all(|key| !shared.contains(key)),
            "a toolset's own keys must not repeat the shared ones"
        );
        // Once per type for the life of the process, as serde's own key lists are static.
        let all: &'static [&'static str] = Vec::leak([own, shared].concat());
        Keys { own, all }
    })
}

/// The keys a struct's derived `Deserialize` takes, asked of it by a deserializer that only
/// listens (empty for anything that is not a struct).
fn struct_keys<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Listen<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Listen<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("only listening"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(serde::de::Error::custom("only listening"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut keys: &'static [&'static str] = &[];
    let _ = T::deserialize(Listen(&mut keys));
    keys
}

struct JailedVisitor<T> {
    keys: Keys,
    own: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for JailedVisitor<T> {
    type Value = Jailed<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of keys")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Jailed<T>, A::Error> {
        let mut split = Split {
            map,
            keys: self.keys,
            programs: ProgramsConfig::default(),
        };
        let own = T::deserialize(serde::de::value::MapAccessDeserializer::new(&mut split))?;
        // The toolset's visitor stops at the end of the map; keys it never asked for cannot
        // remain, as it asks until there are none.
        Ok(Jailed {
            programs: split.programs,
            own,
        })
    }
}

/// The map as the toolset's own deserializer sees it: only its keys; the shared ones are read
/// into `programs` on the way.
struct Split<A> {
    map: A,
    keys: Keys,
    programs: ProgramsConfig,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Split<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key_seed(KeySeed(self.keys))? else {
                return Ok(None);
            };
            if self.keys.own.contains(&key.as_str()) {
                return seed.deserialize(key.into_deserializer()).map(Some);
            }
            let value = ProgramsConfig::deserialize(serde::de::value::MapAccessDeserializer::new(
                OneKey {
                    key: Some(key.clone()),
                    map: &mut self.map,
                },
            ))?;
            self.programs.take(&key, value);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// Reads a key, refusing (where it stands) one that neither `T` nor [`ProgramsConfig`] takes.
struct KeySeed(Keys);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<String, E> {
        let all = self.0.all;
        if all.contains(&key) {
            Ok(key.to_owned())
        } else {
            Err(E::unknown_field(key, all))
        }
    }
}

/// One key of the map and its value, as a map of its own for [`ProgramsConfig`].
struct OneKey<'a, A> {
    key: Option<String>,
    map: &'a mut A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for OneKey<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.key.take() {
            None => Ok(None),
            Some(key) => seed.deserialize(key.into_deserializer()).map(Some),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

impl<T: JsonSchema> JsonSchema for Jailed<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Owned(format!("golem_toolset::Jailed<{}>", T::schema_id()))
    }

    /// `T`'s object schema with [`ProgramsConfig`]'s properties added.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = T::json_schema(generator);
        let shared = ProgramsConfig::json_schema(generator);
        if let (Some(properties), Some(shared)) = (
            schema
                .ensure_object()
                .entry("properties")
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
                .as_object_mut(),
            shared.get("properties").and_then(|p| p.as_object()),
        ) {
            for (key, value) in shared {
                properties.insert(key.clone(), value.clone());
            }
        }
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Own {
        #[serde(default)]
        pattern: Option<String>,
    }

    fn parse(yaml: &str) -> Result<Jailed<Own>, String> {
        serde_saphyr::from_str(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn own_and_shared_keys_in_any_order() {
        let config = parse("timeout: 5\npattern: x\njail: best_effort\nnetwork: true\n").unwrap();
        assert_eq!(config.own.pattern.as_deref(), Some("x"));
        assert_eq!(config.programs.timeout, 5);
        assert_eq!(config.programs.max_timeout, DEFAULT_MAX_TIMEOUT_SECS);
        assert_eq!(config.programs.jail, JailMode::BestEffort);
        assert!(config.programs.network.on);
        assert_eq!(parse("{}").unwrap(), Jailed::default());
        assert_eq!(parse("timeout:\njail:\n").unwrap(), Jailed::default());
    }

    #[test]
    fn unknown_and_bad_keys_are_errors_naming_both_sets() {
        let err = parse("pattern: x\ntimeot: 5\n").unwrap_err();
        assert!(err.contains("timeot"), "{err}");
        assert!(
            err.contains("pattern") && err.contains("max_timeout"),
            "{err}"
        );
        assert!(err.contains("line 2"), "{err}");
        let err = parse("timeout: 0\n").unwrap_err();
        assert!(err.contains("at least 1"), "{err}");
    }

    #[test]
    fn every_shared_key_is_taken() {
        let written = ProgramsConfig {
            network: true.into(),
            timeout: 2,
            max_timeout: 3,
            jail: JailMode::BestEffort,
            workdir: Some("w".into()),
            limits: ProcessLimitsConfig {
                cpu_seconds: Some(1),
                ..ProcessLimitsConfig::default()
            },
        };
        let mut taken = ProgramsConfig::default();
        for key in struct_keys::<ProgramsConfig>() {
            taken.take(key, written.clone());
        }
        assert_eq!(taken, written);
    }

    #[test]
    fn the_schema_has_both_sets_of_keys() {
        let schema = schemars::schema_for!(Jailed<Own>);
        let properties = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .unwrap();
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "pattern",
                "network",
                "timeout",
                "max_timeout",
                "jail",
                "workdir",
                "limits"
            ]
        );
        assert_eq!(schema.get("additionalProperties"), Some(&false.into()));
    }
}
