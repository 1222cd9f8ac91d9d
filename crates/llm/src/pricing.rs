//! What model calls cost: prices per million tokens as data (defaults from the built-in
//! providers' model rows in [`crate::providers::BUILTIN`], overridden by `prices:` in the
//! program config), the cost of one call's [`TokenUsage`]. [`crate::model_table::Described`]
//! carries a price with a model so the runtime can put the cost in `usage` events.

use std::collections::BTreeMap;

use golem_protocol::TokenUsage;
use serde::Deserialize;

use crate::model_table::ModelTable;

/// A model's prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens at the full price.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the provider's cache (the input price when absent).
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input tokens written to the provider's cache (the input price when absent).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// A price with both cache prices.
    pub const fn new(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Self {
        Self {
            input,
            output,
            cache_read: Some(cache_read),
            cache_write: Some(cache_write),
        }
    }

    /// What `usage` costs, in US dollars.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        let dollars = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
        dollars(usage.input_tokens, self.input)
            + dollars(usage.output_tokens, self.output)
            + dollars(
                usage.cache_read_tokens,
                self.cache_read.unwrap_or(self.input),
            )
            + dollars(
                usage.cache_write_tokens,
                self.cache_write.unwrap_or(self.input),
            )
    }
}

/// Prices by model: exact `provider:model` names, or prefixes written with a trailing `*`
/// (`anthropic:claude-sonnet-4*`), matched by [`ModelTable`]. The longest match wins; the
/// program's own entries win over the defaults. A provider that takes another's models is
/// priced like it (`openai-responses:` like `openai:`).
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable(ModelTable<Price>);

impl Default for PriceTable {
    fn default() -> Self {
        Self::defaults()
    }
}

impl PriceTable {
    /// The built-in defaults only: the list prices in the providers' model rows.
    pub fn defaults() -> Self {
        Self(ModelTable::builtin(|row| row.price))
    }

    /// The defaults, with `entries` (from `prices:`) taking precedence.
    pub fn with(self, entries: &BTreeMap<String, Price>) -> Self {
        Self(self.0.with(entries))
    }

    /// The price of `model` (`provider:model`), if known.
    pub fn lookup(&self, model: &str) -> Option<Price> {
        self.0.lookup(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> TokenUsage {
        TokenUsage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
        }
    }

    #[test]
    fn cost_adds_each_kind_of_token_at_its_price() {
        let price = Price::new(3.0, 15.0, 0.3, 3.75);
        let cost = price.cost(&usage(1_000_000, 100_000, 2_000_000, 10_000));
        assert!((cost - (3.0 + 1.5 + 0.6 + 0.0375)).abs() < 1e-9, "{cost}");
        // Without cache prices, cached tokens cost the input price.
        let plain = Price {
            cache_read: None,
            cache_write: None,
            ..price
        };
        assert!((plain.cost(&usage(0, 0, 1_000_000, 1_000_000)) - 6.0).abs() < 1e-9);
    }

    #[test]
    fn the_longest_default_prefix_wins() {
        let table = PriceTable::defaults();
        assert_eq!(
            table
                .lookup("anthropic:claude-opus-4-5-20251101")
                .map(|p| p.input),
            Some(5.0)
        );
        assert_eq!(
            table.lookup("anthropic:claude-opus-4-1").map(|p| p.input),
            Some(15.0)
        );
        assert_eq!(
            table.lookup("openai:gpt-4o-mini").map(|p| p.input),
            Some(0.15)
        );
        assert_eq!(
            table.lookup("openai-responses:gpt-4o").map(|p| p.input),
            Some(2.5)
        );
        assert_eq!(table.lookup("test:default"), None);
        assert_eq!(table.lookup("ollama:llama3"), None);
    }

    #[test]
    fn the_programs_prices_come_first_exact_before_prefix() {
        let own = BTreeMap::from([
            ("openai:gpt-4o*".to_owned(), Price::new(1.0, 2.0, 0.5, 1.0)),
            (
                "openai:gpt-4o-mini".to_owned(),
                Price::new(9.0, 9.0, 9.0, 9.0),
            ),
            ("ollama:*".to_owned(), Price::new(0.0, 0.0, 0.0, 0.0)),
        ]);
        let table = PriceTable::defaults().with(&own);
        assert_eq!(table.lookup("openai:gpt-4o").map(|p| p.input), Some(1.0));
        assert_eq!(
            table.lookup("openai:gpt-4o-mini").map(|p| p.input),
            Some(9.0)
        );
        assert_eq!(table.lookup("ollama:llama3").map(|p| p.output), Some(0.0));
        assert_eq!(table.lookup("openai:gpt-4.1").map(|p| p.input), Some(2.0));
    }
}
