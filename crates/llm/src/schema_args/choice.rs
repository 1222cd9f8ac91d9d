//! Seeded choices: which `enum` value to take, and the mixing that turns the
//! seed into stable picks (also used for `uuid` strings).

use serde_json::{Map, Value};

use super::{Ctx, Generator, declared_kinds};

impl Generator<'_> {
    /// Index in `0..n` picked by the seed for this choice (the seed `0` always gives 0).
    ///
    /// The pick depends on the seed and the choice's contents only, so it does
    /// not shift when unrelated parts of the schema change.
    fn choose(&self, choices: &[&Value]) -> usize {
        let n = choices.len();
        if n <= 1 || self.seed == 0 {
            return 0;
        }
        let mut state = self.seed ^ fingerprint(choices);
        usize::try_from(splitmix64(&mut state) % n as u64).unwrap_or(0)
    }

    /// The `enum` value to use (preferring values of a declared type), or
    /// `None` for an empty `enum`.
    pub(super) fn pick_enum(
        &mut self,
        obj: &Map<String, Value>,
        values: &[Value],
        ctx: Ctx,
    ) -> Option<Value> {
        let kinds = declared_kinds(obj);
        let typed: Vec<&Value> = values
            .iter()
            .filter(|v| kinds.is_empty() || kinds.iter().any(|k| k.admits(v)))
            .collect();
        let candidates: Vec<&Value> = if typed.is_empty() {
            values.iter().collect()
        } else {
            typed
        };
        let n = candidates.len();
        let offset = usize::try_from(ctx.variant.checked_rem(n as u64)?).unwrap_or(0);
        let value = candidates.get((self.choose(&candidates) + offset) % n)?;
        Some(self.charged_clone(value))
    }
}

/// FNV-1a over the scalar contents of a list of choices (bounded work).
fn fingerprint(choices: &[&Value]) -> u64 {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01B3);
        }
    };
    feed(&(choices.len() as u64).to_le_bytes());
    for choice in choices.iter().take(16) {
        match choice {
            Value::Null => feed(b"n"),
            Value::Bool(b) => feed(if *b { b"t" } else { b"f" }),
            Value::Number(n) => feed(n.to_string().as_bytes()),
            Value::String(text) => feed(&text.as_bytes()[..text.len().min(256)]),
            Value::Array(items) => feed(&(items.len() as u64).to_le_bytes()),
            Value::Object(map) => feed(&(map.len() as u64).to_le_bytes()),
        }
        feed(b"\0");
    }
    hash
}

/// SplitMix64 step: turns the seed into well-mixed choices.
pub(super) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::schema_args::generate_args;
    use crate::schema_args::tests::{valid, with_prop};

    #[test]
    fn seed_changes_enum_picks() {
        let schema = with_prop(json!({"type": "string", "enum": ["a", "b", "c", "d", "e"]}));
        assert_eq!(valid(&schema, 0)["x"], "a");
        let picks: std::collections::BTreeSet<String> = (0..64)
            .map(|seed| valid(&schema, seed)["x"].as_str().unwrap().to_owned())
            .collect();
        assert!(picks.len() > 1, "{picks:?}");
        for seed in 0..64 {
            assert_eq!(generate_args(&schema, seed), generate_args(&schema, seed));
        }
        // Without a choice, the seed changes nothing.
        let plain = with_prop(json!({"type": "integer", "minimum": 3}));
        assert_eq!(generate_args(&plain, 1), generate_args(&plain, 99));
    }
}
