//! Values by model, as data: built-in defaults by `provider:model` prefix (one column of the
//! providers' model rows, [`crate::providers::BUILTIN`]), and the program's own entries
//! (`prices:`, `context_windows:`) written as exact names or `prefix*` patterns.
//! The one matcher every per-model table uses (see docs/models.md).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::message::ModelRequest;
use crate::model::{EventStream, Model};
use crate::pricing::Price;
use crate::providers::{self, ModelRow};
use crate::spec::ModelSpec;

/// A value per model: the program's entries first (an exact name beats a prefix written with
/// `*`, the longest prefix wins), then the built-in defaults (prefixes; the longest wins). A
/// provider that takes another's models
/// ([`models_of`](crate::providers::ProviderEntry::models_of)) is looked up under that
/// provider's name (`openai-responses:` as `openai:`).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTable<T> {
    /// The program's entries (pattern → value).
    own: BTreeMap<String, T>,
    /// The built-in defaults, `provider:model` prefixes.
    defaults: Vec<(String, T)>,
}

impl<T: Copy> ModelTable<T> {
    /// A table with these defaults (`provider:prefix`, value) and no entries of the program's.
    pub fn new(defaults: Vec<(String, T)>) -> Self {
        Self {
            own: BTreeMap::new(),
            defaults,
        }
    }

    /// A table whose defaults are one column of the built-in providers' model rows.
    pub fn builtin(column: impl Fn(&ModelRow) -> Option<T>) -> Self {
        Self::new(providers::column(column))
    }

    /// The table with `entries` (from the program config) taking precedence.
    pub fn with(mut self, entries: &BTreeMap<String, T>) -> Self {
        self.own
            .extend(entries.iter().map(|(k, v)| (k.clone(), *v)));
        self
    }

    /// The value for `model` (`provider:model`), if any entry or default matches.
    pub fn lookup(&self, model: &str) -> Option<T> {
        let model = providers::table_name(model);
        let model = model.as_ref();
        let own = best(self.own.iter().map(|(p, v)| (p.as_str(), *v)), model);
        // Defaults are prefixes: `openai:gpt-4o` matches `openai:gpt-4o-2024-08-06`.
        own.or_else(|| {
            self.defaults
                .iter()
                .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
                .max_by_key(|(prefix, _)| prefix.len())
                .map(|(_, value)| *value)
        })
    }
}

/// The best entry for `model` among `(pattern, value)`: an exact name, else the longest
/// `prefix*` it starts with.
fn best<'a, T>(entries: impl Iterator<Item = (&'a str, T)>, model: &str) -> Option<T> {
    let mut found: Option<(usize, T)> = None;
    for (pattern, value) in entries {
        let rank = if pattern == model {
            usize::MAX
        } else if let Some(prefix) = pattern.strip_suffix('*')
            && model.starts_with(prefix)
        {
            prefix.len()
        } else {
            continue;
        };
        if found.as_ref().is_none_or(|(best, _)| rank > *best) {
            found = Some((rank, value));
        }
    }
    found.map(|(_, value)| value)
}

/// A model with what the tables know about it: its price and its context window.
pub struct Described {
    inner: Arc<dyn Model>,
    price: Option<Price>,
    window: Option<u64>,
}

impl Described {
    /// Wraps `model` so that it reports `price` and `window`; unwrapped when both are unknown.
    pub fn wrap(
        model: Arc<dyn Model>,
        price: Option<Price>,
        window: Option<u64>,
    ) -> Arc<dyn Model> {
        if price.is_none() && window.is_none() {
            return model;
        }
        Arc::new(Self {
            inner: model,
            price,
            window,
        })
    }
}

#[async_trait]
impl Model for Described {
    fn spec(&self) -> &ModelSpec {
        self.inner.spec()
    }

    fn price(&self) -> Option<Price> {
        self.price.or_else(|| self.inner.price())
    }

    fn context_window(&self) -> Option<u64> {
        self.window.or_else(|| self.inner.context_window())
    }

    fn server(&self) -> Option<crate::http::ServerAddress> {
        self.inner.server()
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        self.inner.stream(request, cancel).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Vec<(String, u32)> {
        vec![("p:m".to_owned(), 1), ("p:m-long".to_owned(), 2)]
    }

    #[test]
    fn exact_beats_prefix_and_the_longest_prefix_wins() {
        let own = BTreeMap::from([
            ("p:*".to_owned(), 10),
            ("p:m-*".to_owned(), 20),
            ("p:m-x".to_owned(), 30),
        ]);
        let table = ModelTable::new(defaults()).with(&own);
        assert_eq!(table.lookup("p:m-x"), Some(30));
        assert_eq!(table.lookup("p:m-y"), Some(20));
        assert_eq!(table.lookup("p:other"), Some(10));
        assert_eq!(table.lookup("q:m"), None);
        let defaults = ModelTable::new(defaults());
        assert_eq!(defaults.lookup("p:m-long-2025"), Some(2));
        assert_eq!(defaults.lookup("p:m-2025"), Some(1));
    }

    #[test]
    fn responses_models_are_looked_up_as_openai_ones() {
        let own = BTreeMap::from([("openai:gpt-x".to_owned(), 7)]);
        let table = ModelTable::new(Vec::new()).with(&own);
        assert_eq!(table.lookup("openai-responses:gpt-x"), Some(7));
    }
}
