//! The provider clients, one module each, and [`BUILTIN`]: the one table of the built-in
//! providers. Each entry is written in the folder of the client that serves it (its name, wire
//! format, constructor, key variable and its models' prices and context windows); model names
//! (`crate::spec`), the resolver (`crate::resolve`), prices (`crate::pricing`) and context
//! windows (`crate::context`) all read this table.

use std::sync::Arc;

use crate::error::ModelError;
use crate::http::HttpSettings;
use crate::model::Model;
use crate::pricing::Price;
use crate::resolve::Wire;
use crate::spec::ModelSpec;

pub mod anthropic;
pub mod openai_chat;
pub mod openai_common;
pub mod openai_responses;
pub mod replay;
pub mod script;
pub mod test_model;

/// The built-in providers, in the order error messages list them. A provider defined in the
/// program config with one of these names replaces it.
pub const BUILTIN: &[&ProviderEntry] = &[
    &anthropic::entry::ANTHROPIC,
    &openai_chat::entry::OPENAI,
    &openai_responses::entry::OPENAI_RESPONSES,
    &openai_chat::entry::OLLAMA,
    &openai_chat::entry::OPENROUTER,
    &test_model::ENTRY,
    &replay::ENTRY,
];

/// Builds a built-in provider's model for `spec`, with these timeouts and retries for an HTTP
/// client (its own defaults without them). Keys are read from the environment here.
pub type Constructor = fn(ModelSpec, Option<HttpSettings>) -> Result<Arc<dyn Model>, ModelError>;

/// One built-in provider.
#[derive(Debug)]
pub struct ProviderEntry {
    /// The name before the colon in `provider:model`.
    pub name: &'static str,
    /// The wire format its client speaks; `None` for the offline providers (`test`, `replay`).
    pub wire: Option<Wire>,
    /// Makes its models.
    pub build: Constructor,
    /// The environment variable its API key is read from, if it has one (`ollama`'s is
    /// optional).
    pub api_key_env: Option<&'static str>,
    /// The base URL it uses when its environment names none.
    pub base_url: Option<&'static str>,
    /// The model a bare provider name means (`test` is `test:default`).
    pub bare_model: Option<&'static str>,
    /// Another provider whose prices and windows its models take, under that provider's name
    /// (`openai-responses:gpt-4o` is looked up as `openai:gpt-4o`, in the program's entries
    /// too).
    pub models_of: Option<&'static str>,
    /// What the built-in tables know of its models.
    pub models: &'static [ModelRow],
}

/// What is known of the models whose names start with `prefix` (the part after the colon).
/// Tables pick, per column, the longest prefix that has a value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelRow {
    /// The start of the model names it covers (`claude-opus-4` covers `claude-opus-4-1`).
    pub prefix: &'static str,
    /// List prices (they go stale: `prices:` in the program config corrects them).
    pub price: Option<Price>,
    /// The context window in tokens, input and output together.
    pub window: Option<u64>,
}

impl ModelRow {
    /// A family with both a price and a window.
    pub const fn new(prefix: &'static str, price: Price, window: u64) -> Self {
        Self {
            prefix,
            price: Some(price),
            window: Some(window),
        }
    }

    /// A family whose window is known and whose price is not.
    pub const fn window(prefix: &'static str, window: u64) -> Self {
        Self {
            prefix,
            price: None,
            window: Some(window),
        }
    }
}

/// The built-in provider named `name`.
pub fn builtin(name: &str) -> Option<&'static ProviderEntry> {
    BUILTIN.iter().copied().find(|entry| entry.name == name)
}

/// The names of the built-in providers, in table order.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|entry| entry.name)
}

/// `provider:model` as the per-model tables look it up: under the provider whose models it
/// takes ([`ProviderEntry::models_of`]), else as it is.
pub fn table_name(model: &str) -> std::borrow::Cow<'_, str> {
    let alias = model.split_once(':').and_then(|(provider, rest)| {
        let target = builtin(provider)?.models_of?;
        Some(format!("{target}:{rest}"))
    });
    match alias {
        Some(name) => std::borrow::Cow::Owned(name),
        None => std::borrow::Cow::Borrowed(model),
    }
}

/// Every built-in `provider:prefix` with its value in one column (a price, a window), for a
/// [`crate::model_table::ModelTable`]'s defaults.
pub fn column<T>(value: impl Fn(&ModelRow) -> Option<T>) -> Vec<(String, T)> {
    BUILTIN
        .iter()
        .flat_map(|entry| {
            entry
                .models
                .iter()
                .filter_map(|row| Some((format!("{}:{}", entry.name, row.prefix), value(row)?)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::collections::BTreeSet;

    use super::*;
    use crate::context::ContextWindows;
    use crate::pricing::PriceTable;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut seen = BTreeSet::new();
        for entry in BUILTIN {
            assert!(seen.insert(entry.name), "`{}` twice", entry.name);
            assert!(
                !entry.name.is_empty() && !entry.name.contains([':', ' ']),
                "{entry:?}"
            );
            let mut prefixes = BTreeSet::new();
            for row in entry.models {
                assert!(
                    prefixes.insert(row.prefix),
                    "{}: `{}` twice",
                    entry.name,
                    row.prefix
                );
                assert!(row.price.is_some() || row.window.is_some(), "{row:?}");
                assert!(row.window.is_none_or(|w| w > 0), "{row:?}");
            }
            if let Some(target) = entry.models_of {
                let target = builtin(target).unwrap();
                assert!(target.models_of.is_none() && entry.models.is_empty());
            }
            // An HTTP provider has a wire; an offline one has no key and no URL.
            if entry.wire.is_none() {
                assert!(entry.api_key_env.is_none() && entry.base_url.is_none());
            }
        }
    }

    /// The prices (input, output, cache read, cache write per million tokens) and windows the
    /// tables gave before they were moved into the providers' folders: the same model names
    /// must get the same values.
    const PRICES_BEFORE: &[(&str, [f64; 4])] = &[
        ("anthropic:claude-opus-4-5", [5.0, 25.0, 0.5, 6.25]),
        ("anthropic:claude-opus-4", [15.0, 75.0, 1.5, 18.75]),
        ("anthropic:claude-sonnet-4", [3.0, 15.0, 0.3, 3.75]),
        ("anthropic:claude-3-7-sonnet", [3.0, 15.0, 0.3, 3.75]),
        ("anthropic:claude-haiku-4-5", [1.0, 5.0, 0.1, 1.25]),
        ("anthropic:claude-3-5-haiku", [0.8, 4.0, 0.08, 1.0]),
        ("openai:gpt-5-nano", [0.05, 0.4, 0.005, 0.05]),
        ("openai:gpt-5-mini", [0.25, 2.0, 0.025, 0.25]),
        ("openai:gpt-5", [1.25, 10.0, 0.125, 1.25]),
        ("openai:gpt-4.1-nano", [0.1, 0.4, 0.025, 0.1]),
        ("openai:gpt-4.1-mini", [0.4, 1.6, 0.1, 0.4]),
        ("openai:gpt-4.1", [2.0, 8.0, 0.5, 2.0]),
        ("openai:gpt-4o-mini", [0.15, 0.6, 0.075, 0.15]),
        ("openai:gpt-4o", [2.5, 10.0, 1.25, 2.5]),
        ("openai:o4-mini", [1.1, 4.4, 0.275, 1.1]),
        ("openai:o3", [2.0, 8.0, 0.5, 2.0]),
    ];
    const WINDOWS_BEFORE: &[(&str, u64)] = &[
        ("anthropic:claude-", 200_000),
        ("openai:gpt-5", 400_000),
        ("openai:gpt-4.1", 1_047_576),
        ("openai:gpt-4o", 128_000),
        ("openai:o3", 200_000),
        ("openai:o4-mini", 200_000),
        ("openrouter:anthropic/claude-", 200_000),
        ("openrouter:openai/gpt-4o", 128_000),
        ("openrouter:openai/gpt-5", 400_000),
    ];

    #[test]
    fn every_model_keeps_its_price_and_window() {
        let prices = PriceTable::defaults();
        let windows = ContextWindows::defaults();
        for (prefix, [input, output, read, write]) in PRICES_BEFORE {
            let expected = Price::new(*input, *output, *read, *write);
            for name in [
                prefix.to_string(),
                format!("{prefix}-20250101"),
                prefix.replacen("openai:", "openai-responses:", 1),
            ] {
                assert_eq!(prices.lookup(&name), Some(expected), "{name}");
            }
        }
        for (prefix, window) in WINDOWS_BEFORE {
            for name in [
                prefix.to_string(),
                format!("{prefix}x-1"),
                prefix.replacen("openai:", "openai-responses:", 1),
            ] {
                assert_eq!(windows.lookup(&name), Some(*window), "{name}");
            }
        }
        // The families the old tables gave a window but no price, and the models neither knew.
        for name in [
            "anthropic:claude-2",
            "openrouter:anthropic/claude-sonnet-4",
            "openrouter:openai/gpt-4o",
        ] {
            assert_eq!(prices.lookup(name), None, "{name}");
            assert!(windows.lookup(name).is_some(), "{name}");
        }
        for name in [
            "test:default",
            "replay:/x.jsonl",
            "ollama:llama3",
            "openai:gpt-3.5-turbo",
            "openrouter:meta/llama",
            "anthropic:other",
            "claude-opus-4",
        ] {
            assert_eq!(prices.lookup(name), None, "{name}");
            assert_eq!(windows.lookup(name), None, "{name}");
        }
        let rows: usize = BUILTIN.iter().map(|e| e.models.len()).sum();
        let priced = column(|row| row.price).len();
        let windowed = column(|row| row.window).len();
        assert_eq!(priced, PRICES_BEFORE.len());
        assert!(windowed >= WINDOWS_BEFORE.len() && rows >= priced);
    }

    /// The table and docs/models.md's list of built-in providers agree: every entry has a row
    /// naming its key variable and default base URL, and every row is an entry.
    #[test]
    fn docs_list_every_builtin_provider() {
        let docs = include_str!("../../../../docs/models.md");
        let section = docs
            .split("## Built-in providers")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .unwrap();
        let rows: Vec<&str> = section
            .lines()
            .filter(|line| line.starts_with("| `"))
            .collect();
        for entry in BUILTIN {
            let row = rows
                .iter()
                .find(|row| row.starts_with(&format!("| `{}` |", entry.name)))
                .unwrap_or_else(|| panic!("no row for {}", entry.name));
            for needed in entry.api_key_env.iter().chain(&entry.base_url) {
                assert!(row.contains(needed), "{row} lacks {needed}");
            }
        }
        assert_eq!(rows.len(), BUILTIN.len(), "{rows:#?}");
    }
}
