//! Deterministic generation of tool-call arguments from a tool's JSON Schema.
//!
//! The built-in offline `test` model calls every tool once with arguments that
//! validate against the tool's input schema. [`generate_args`] builds those
//! arguments: small, predictable, and reproducible for a given `(schema, seed)`.
//!
//! # Rules
//!
//! - `default` wins wherever it appears, then `const`, then an `enum` value
//!   (picked by the seed; seed `0` always takes the first value), then
//!   `examples[0]`.
//! - Objects get every `required` property, plus optional properties that have
//!   a `default` (so calls stay small). Keys follow the schema's property order
//!   and no key outside `properties` is added when `additionalProperties` is
//!   `false`. `minProperties`, `maxProperties` and `dependentRequired` are
//!   honoured where possible.
//! - Strings honour `minLength`/`maxLength` (capped at 10 000 chars) and the
//!   common `format`s (`date-time`, `date`, `time`, `duration`, `email`,
//!   `hostname`, `ipv4`, `ipv6`, `uri`/`url`, `uri-reference`, `iri`,
//!   `uri-template`, `uuid` (derived from the seed), `json-pointer`,
//!   `relative-json-pointer`, `regex`, `byte`). Without a format the value is
//!   `"test"`, padded or truncated to fit the length bounds.
//! - `pattern` is handled by a tiny generator for a subset of ECMA-262 regular
//!   expressions: literals, escapes (`\d`, `\w`, `\s` and their negations),
//!   character classes, `.`, groups, alternation (the first branch is used),
//!   quantifiers and `^`/`$`. Common patterns such as `^[a-z]+$`, `^[0-9]+$`
//!   or `^[a-z][a-z0-9_]*$` are satisfied; patterns using lookaround,
//!   backreferences, word boundaries or Unicode property classes are **not
//!   guaranteed** (the plain default string is returned for them).
//! - Numbers honour `minimum`, `maximum`, `exclusiveMinimum`,
//!   `exclusiveMaximum` (draft 4 boolean form included) and `multipleOf`; the
//!   unconstrained value is `1`.
//! - Booleans are `false`; `null` is `null`; a `type` list uses its first
//!   non-null type.
//! - Arrays get `minItems` items (none when absent, at most 100), from
//!   `prefixItems`/`items`/`additionalItems`; `contains` and `uniqueItems` are
//!   honoured where cheap.
//! - Local `$ref`s (`#`, `#/$defs/..`, `#/definitions/..`, any JSON pointer)
//!   are resolved against the root schema, at most 16 deep; past that the
//!   simplest value (`null`, `{}` or `[]`) is produced.
//! - `anyOf`/`oneOf` take the first non-null branch (a `null` branch is
//!   preferred once the reference depth is exhausted); `allOf` branches are
//!   merged shallowly. `not`, `if`/`then`/`else`, `patternProperties`,
//!   `propertyNames` and `dependentSchemas` are ignored.
//!
//! The generator never panics: boolean schemas, garbage keywords, huge bounds
//! and cyclic references all produce some value. Total work is bounded by an
//! internal budget, after which the simplest values are produced.
//!
//! # Layout
//!
//! This module holds the entry point, the dispatcher (which value wins, which
//! type to generate), the depth limits and the work budget. The rest is split
//! by concern: `resolve` (`$ref`, `allOf`/`anyOf`/`oneOf`), `choice` (seeded
//! picks), `strings` (lengths and formats), `pattern` (the regex subset),
//! `numbers`, and `collections` (arrays and objects). End-to-end tests that
//! cut across those live in `tests`, with the shared validation helpers.

mod choice;
mod collections;
mod numbers;
mod pattern;
mod resolve;
mod strings;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

/// How many `$ref`s may be followed along one path before giving up.
const MAX_REF_DEPTH: usize = 16;
/// How deep the generator may recurse (nesting plus schema rewrites).
const MAX_DEPTH: usize = 64;
/// Longest string ever produced.
const MAX_STRING_CHARS: usize = 10_000;
/// Longest array ever produced (also caps `minProperties` filling).
const MAX_ARRAY_ITEMS: usize = 100;
/// Work units (nodes generated, 16-char chunks produced, schema nodes cloned).
const BUDGET: usize = 250_000;

/// Arguments that validate against `schema`, chosen deterministically from `seed`.
///
/// The same `(schema, seed)` pair always yields the same value. The seed only
/// matters where the schema offers a choice (`enum` values, `uuid` strings);
/// seed `0` always picks the first `enum` value. See the module documentation
/// for the exact rules and the (documented) limits on `pattern`.
pub fn generate_args(schema: &Value, seed: u64) -> Value {
    let mut generator = Generator {
        root: schema,
        seed,
        budget: BUDGET,
    };
    generator.generate(
        schema,
        Ctx {
            depth: 0,
            ref_depth: 0,
            variant: 0,
            root: true,
        },
    )
}

/// Where the generator stands while walking the schema.
#[derive(Clone, Copy)]
struct Ctx {
    /// Recursion depth (nesting plus schema rewrites).
    depth: usize,
    /// `$ref`s followed on this path.
    ref_depth: usize,
    /// Perturbation index used to make `uniqueItems` array items differ.
    variant: u64,
    /// Whether the value being generated is the top-level arguments value.
    root: bool,
}

impl Ctx {
    /// Same instance, rewritten schema (allOf/anyOf merge).
    fn rewritten(self) -> Self {
        Ctx {
            depth: self.depth + 1,
            ..self
        }
    }

    /// Same instance, schema reached through a `$ref`.
    fn through_ref(self) -> Self {
        Ctx {
            depth: self.depth + 1,
            ref_depth: self.ref_depth + 1,
            ..self
        }
    }

    /// A nested value (property or array item).
    fn child(self) -> Self {
        Ctx {
            depth: self.depth + 1,
            root: false,
            ..self
        }
    }

    /// Same context with another uniqueness variant.
    fn with_variant(self, variant: u64) -> Self {
        Ctx { variant, ..self }
    }
}

/// The JSON type the generator settled on for a schema.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (Kind::Null, Value::Null)
            | (Kind::Boolean, Value::Bool(_))
            | (Kind::Number, Value::Number(_))
            | (Kind::String, Value::String(_))
            | (Kind::Array, Value::Array(_))
            | (Kind::Object, Value::Object(_)) => true,
            (Kind::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        }
    }
}

/// Generation state: the root (for `$ref`), the seed and the work budget.
struct Generator<'a> {
    root: &'a Value,
    seed: u64,
    budget: usize,
}

impl Generator<'_> {
    /// The value for `schema`: the dispatcher every other part recurses into.
    fn generate(&mut self, schema: &Value, ctx: Ctx) -> Value {
        if self.budget == 0 || ctx.depth > MAX_DEPTH || ctx.ref_depth > MAX_REF_DEPTH {
            return simplest(schema, ctx);
        }
        self.budget -= 1;
        let Value::Object(obj) = schema else {
            // `true`, `false` and garbage: anything (or nothing) validates.
            return untyped(ctx);
        };

        if let Some(fixed) = obj.get("default").or_else(|| obj.get("const")) {
            return self.charged_clone(fixed);
        }
        if let Some(Value::Array(values)) = obj.get("enum")
            && let Some(value) = self.pick_enum(obj, values, ctx)
        {
            return value;
        }
        if let Some(Value::Array(examples)) = obj.get("examples")
            && let Some(first) = examples.first()
        {
            return self.charged_clone(first);
        }
        if let Some(value) = self.rewrite(schema, obj, ctx) {
            return value;
        }

        match kind_of(obj) {
            Some(Kind::Null) => Value::Null,
            Some(Kind::Boolean) => Value::Bool(ctx.variant % 2 == 1),
            Some(Kind::Integer) => numbers::number(obj, true, ctx.variant),
            Some(Kind::Number) => numbers::number(obj, false, ctx.variant),
            Some(Kind::String) => {
                let text = self.string(obj, ctx);
                self.charge(text.len() / 16);
                Value::String(text)
            }
            Some(Kind::Array) => self.array(obj, ctx),
            Some(Kind::Object) => self.object(obj, ctx),
            None => untyped(ctx),
        }
    }

    /// Spends `cost` work units.
    fn charge(&mut self, cost: usize) {
        self.budget = self.budget.saturating_sub(cost);
    }

    /// Clones a schema-provided value, paying for its size.
    fn charged_clone(&mut self, value: &Value) -> Value {
        self.charge_size(value);
        value.clone()
    }

    /// Spends the size of `value` (counted no further than the budget left).
    fn charge_size(&mut self, value: &Value) {
        let cost = size(value, self.budget.saturating_add(1));
        self.charge(cost);
    }
}

/// Number of JSON nodes in `value`, counting stops at `cap`.
fn size(value: &Value, cap: usize) -> usize {
    fn walk(value: &Value, cap: usize, count: &mut usize) {
        if *count >= cap {
            return;
        }
        *count += 1;
        match value {
            Value::Array(items) => {
                for item in items {
                    walk(item, cap, count);
                }
            }
            Value::Object(map) => {
                for item in map.values() {
                    walk(item, cap, count);
                }
            }
            Value::String(text) => *count += text.len() / 16,
            _ => {}
        }
    }
    let mut count = 0;
    walk(value, cap, &mut count);
    count
}

/// Value for a schema that constrains nothing recognisable.
fn untyped(ctx: Ctx) -> Value {
    if ctx.root {
        Value::Object(Map::new())
    } else {
        Value::Null
    }
}

/// The cheapest plausible value, used past the depth limits or the budget.
fn simplest(schema: &Value, ctx: Ctx) -> Value {
    let Value::Object(obj) = schema else {
        return untyped(ctx);
    };
    let kinds = declared_kinds(obj);
    if kinds.contains(&Kind::Null) {
        Value::Null
    } else if kinds.contains(&Kind::Object) || obj.contains_key("properties") {
        Value::Object(Map::new())
    } else if kinds.contains(&Kind::Array) {
        Value::Array(Vec::new())
    } else {
        untyped(ctx)
    }
}

/// The recognised types listed under `type`.
fn declared_kinds(obj: &Map<String, Value>) -> Vec<Kind> {
    match obj.get("type") {
        Some(Value::String(name)) => Kind::parse(name).into_iter().collect(),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .filter_map(Kind::parse)
            .collect(),
        _ => Vec::new(),
    }
}

/// The type to generate: the first non-null declared type, else inferred from keywords.
fn kind_of(obj: &Map<String, Value>) -> Option<Kind> {
    let kinds = declared_kinds(obj);
    if let Some(kind) = kinds.iter().find(|k| **k != Kind::Null) {
        return Some(*kind);
    }
    if !kinds.is_empty() {
        return Some(Kind::Null);
    }
    let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "patternProperties",
        "dependentRequired",
    ]) {
        Some(Kind::Object)
    } else if has(&[
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "contains",
        "uniqueItems",
    ]) {
        Some(Kind::Array)
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        Some(Kind::String)
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        Some(Kind::Number)
    } else {
        None
    }
}

/// A non-negative integer keyword (`minLength`, `minItems`, ...), saturating.
fn get_usize(obj: &Map<String, Value>, key: &str) -> Option<usize> {
    let value = obj.get(key)?;
    if let Some(n) = value.as_u64() {
        return Some(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let f = value.as_f64()?;
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0).then_some(f as usize)
}
