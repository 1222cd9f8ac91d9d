//! `network:` of a jailed toolset (`code`, `shell`, a custom module, a jailed MCP server):
//! `false` (the default: no network), `true` (the internet, but not the host's own services
//! nor private networks), or `{ allow_private: [10.1.0.0/16, 192.168.1.20] }` (on, with those
//! private networks or hosts reachable too).

use golem_sandbox::jail::Ipv4Network;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A toolset's network, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkAccess {
    /// Whether the network is on.
    pub on: bool,
    /// Private networks the toolset's processes may reach all the same.
    pub allow_private: Vec<Ipv4Network>,
}

impl From<bool> for NetworkAccess {
    fn from(on: bool) -> NetworkAccess {
        NetworkAccess {
            on,
            allow_private: Vec::new(),
        }
    }
}

/// The map form: the network on, with exceptions.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkOn {
    #[serde(default, deserialize_with = "private_networks")]
    allow_private: Vec<Ipv4Network>,
}

/// A list of networks (`10.1.0.0/16`) or hosts (`10.1.2.3`), each checked where it stands.
pub fn private_networks<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Ipv4Network>, D::Error> {
    Option::<Vec<String>>::deserialize(deserializer)?
        .unwrap_or_default()
        .iter()
        .map(|text| Ipv4Network::parse(text).map_err(serde::de::Error::custom))
        .collect()
}

impl<'de> Deserialize<'de> for NetworkAccess {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NetworkAccess, D::Error> {
        struct Access;
        impl<'de> Visitor<'de> for Access {
            type Value = NetworkAccess;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("`true`, `false` or `{ allow_private: [10.1.0.0/16] }`")
            }
            fn visit_bool<E: serde::de::Error>(self, on: bool) -> Result<NetworkAccess, E> {
                Ok(on.into())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<NetworkAccess, E> {
                Ok(NetworkAccess::default())
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<NetworkAccess, E> {
                Ok(NetworkAccess::default())
            }
            fn visit_str<E: serde::de::Error>(self, found: &str) -> Result<NetworkAccess, E> {
                Err(not_a_network(&format!("\"{}\"", found.escape_debug())))
            }
            fn visit_i64<E: serde::de::Error>(self, found: i64) -> Result<NetworkAccess, E> {
                Err(not_a_network(&found.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, found: u64) -> Result<NetworkAccess, E> {
                Err(not_a_network(&found.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, found: f64) -> Result<NetworkAccess, E> {
                Err(not_a_network(&found.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                _: A,
            ) -> Result<NetworkAccess, A::Error> {
                Err(not_a_network("a list"))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<NetworkAccess, A::Error> {
                let on = NetworkOn::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(NetworkAccess {
                    on: true,
                    allow_private: on.allow_private,
                })
            }
        }
        deserializer.deserialize_any(Access)
    }
}

impl schemars::JsonSchema for NetworkAccess {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NetworkAccess".into()
    }

    /// `true`, `false`, nothing, or `{ allow_private: [...] }`.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`false` (no network), `true` (the internet, but not the host's own services nor \
                            private networks), or `{ allow_private: [10.1.0.0/16] }` (on, with those private \
                            networks or hosts reachable too).",
            "anyOf": [
                { "type": ["boolean", "null"] },
                {
                    "type": "object",
                    "properties": {
                        "allow_private": {
                            "description": "Private IPv4 networks (`10.1.0.0/16`) or hosts (`10.1.2.3`).",
                            "type": ["array", "null"],
                            "items": { "type": "string" }
                        }
                    },
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// The error of a `network:` that is neither a bool nor a map (`found` as written).
fn not_a_network<E: serde::de::Error>(found: &str) -> E {
    E::custom(format!(
        "must be `true`, `false` or `{{ allow_private: [10.1.0.0/16] }}`, found {found}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<NetworkAccess, String> {
        serde_saphyr::from_str(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_bool_or_a_map_of_private_networks() {
        assert_eq!(parse("true"), Ok(true.into()));
        assert_eq!(parse("false"), Ok(NetworkAccess::default()));
        let access = parse("{ allow_private: [10.1.0.0/16, 192.168.1.20] }").unwrap();
        assert!(access.on);
        let listed: Vec<String> = access.allow_private.iter().map(|n| n.to_string()).collect();
        assert_eq!(listed, ["10.1.0.0/16", "192.168.1.20/32"]);
    }

    #[test]
    fn bad_networks_and_keys_say_what_is_expected() {
        let err = parse("{ allow_private: [intranet] }").unwrap_err();
        assert!(err.contains("IPv4 address or network"), "{err}");
        let err = parse("{ allow: [10.0.0.0/8] }").unwrap_err();
        assert!(err.contains("allow"), "{err}");
        let err = parse("3").unwrap_err();
        assert!(err.contains("allow_private"), "{err}");
    }
}
