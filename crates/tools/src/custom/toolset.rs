//! The custom toolset as a worker file configures it (`toolsets.custom`: one module or a list)
//! and its place among the toolsets: each module's tools, run in a jail of its own.

use std::fmt;
use std::sync::Arc;

use golem_core::approval::ApprovalConfig;
use golem_protocol::StatusLevel;
use golem_sandbox::jail::Jail;
use golem_toolset::config::{
    JailMode, ProcessLimitsConfig, default_timeout, non_empty_string, or_default, positive_secs,
};
use golem_toolset::{
    BuildContext, JailUse, NetworkAccess, ProcessJail, Reach, Tools, Toolset, ToolsetConfig,
    ToolsetError,
};
use schemars::JsonSchema;
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::{CustomNotice, CustomOptions, cache_dir, custom_tools};

/// Custom tools from local modules (Python, JavaScript or any executable).
pub struct CustomToolset;

/// The custom toolset (`toolsets.custom`): one module, or a list of them, each written as a
/// [`CustomModuleConfig`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomToolsetConfig {
    /// The modules, in the order written.
    pub modules: Vec<CustomModuleConfig>,
}

impl JsonSchema for CustomToolsetConfig {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CustomToolsetConfig".into()
    }

    /// One module, a list of them, or nothing.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let module = generator.subschema_for::<CustomModuleConfig>();
        schemars::json_schema!({
            "description": "One module of custom tools, or a list of them.",
            "anyOf": [
                module,
                { "type": "array", "items": module },
                { "type": "null" }
            ]
        })
    }
}

impl<'de> Deserialize<'de> for CustomToolsetConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Modules;
        impl<'de> Visitor<'de> for Modules {
            type Value = CustomToolsetConfig;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a module (`module: ./tools.py`) or a list of modules")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let module = CustomModuleConfig::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                Ok(CustomToolsetConfig {
                    modules: vec![module],
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let modules = Vec::<CustomModuleConfig>::deserialize(
                    serde::de::value::SeqAccessDeserializer::new(seq),
                )?;
                Ok(CustomToolsetConfig { modules })
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(CustomToolsetConfig::default())
            }
        }
        deserializer.deserialize_any(Modules)
    }
}

/// One module of custom tools: a Python file, a JavaScript module or any executable, run in
/// the jail with the worker's zones.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomModuleConfig {
    /// The module, relative to the worker file: `.py`, `.mjs`/`.js`, or any executable.
    #[serde(deserialize_with = "non_empty_string")]
    #[schemars(length(min = 1))]
    pub module: String,
    /// The whitelist: only these tools are exposed (absent: every tool of the module).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Decisions for tools without a policy of their own, with a default (`ask` when absent).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ApprovalConfig>")]
    pub approval: ApprovalConfig,
    /// Whether the module may use the network, and which private networks (default: none).
    #[serde(default)]
    pub network: NetworkAccess,
    /// Wall-clock limit of each call (and of reading the module's tools) in seconds
    /// (default 60).
    #[serde(default = "default_timeout", deserialize_with = "positive_secs")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout: u64,
    /// How strictly to jail (default `strict`).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<JailMode>")]
    pub jail: JailMode,
    /// Resource limits of the module's processes.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ProcessLimitsConfig>")]
    pub limits: ProcessLimitsConfig,
}

impl CustomModuleConfig {
    /// `module` with every other key at its default.
    pub fn new(module: impl Into<String>) -> CustomModuleConfig {
        CustomModuleConfig {
            module: module.into(),
            tools: None,
            approval: ApprovalConfig::default(),
            network: NetworkAccess::default(),
            timeout: golem_toolset::DEFAULT_TIMEOUT_SECS,
            jail: JailMode::Strict,
            limits: ProcessLimitsConfig::default(),
        }
    }
}

impl ToolsetConfig for CustomToolsetConfig {
    fn empty() -> Result<CustomToolsetConfig, &'static str> {
        Ok(CustomToolsetConfig::default())
    }
}

impl Toolset for CustomToolset {
    type Config = CustomToolsetConfig;

    /// Each module run in a jail over the worker's zones with its own network setting; the
    /// module's path is relative to the worker file. Its tools come from the describe cache
    /// under the program root when it holds this very module (no process started), and a
    /// result a tool returned that is not valid is announced as a `status` warning. A module
    /// that cannot be read or described, or a whitelisted tool it lacks, fails the launch
    /// with a message naming the module and the tool.
    fn build(config: &CustomToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        if config.modules.is_empty() {
            return Err(cx.config_error(
                "custom",
                "name a module (`module: ./tools.py`) or a list of them",
            ));
        }
        let base = cx.worker_dir();
        let notice = cx.notice.clone().map(|notice| {
            CustomNotice(Arc::new(move |message: &str| {
                notice(StatusLevel::Warning, message)
            }))
        });
        let mut tools = Vec::new();
        for module in &config.modules {
            let built = ProcessJail {
                toolset: "custom",
                mode_key: "jail",
                network: &module.network,
                jail: module.jail,
                limits: &module.limits,
                workdir: None,
                timeout: module.timeout,
                max_timeout: module.timeout,
            }
            .build(cx)?;
            let describe_jail = Jail::new(
                cx.jail_helper.map(Into::into).unwrap_or_default(),
                cx.sandbox.clone(),
                built.jail.policy().clone(),
            );
            let options = CustomOptions {
                config: module.clone(),
                path: base.join(&module.module),
                cache_dir: Some(cache_dir(cx.program_root)),
                notice: notice.clone(),
            };
            tools.extend(
                custom_tools(built.jail, describe_jail, options)
                    .map_err(|e| cx.config_error("custom", e))?,
            );
        }
        Ok(tools)
    }

    fn reach(_: &CustomToolsetConfig) -> Reach {
        Reach {
            anything: true,
            ..Reach::default()
        }
    }

    fn jail_use(config: &CustomToolsetConfig) -> Option<JailUse> {
        Some(JailUse {
            label: None,
            network_off: false,
            network_on: config.modules.iter().any(|m| m.network.on),
        })
    }
}
