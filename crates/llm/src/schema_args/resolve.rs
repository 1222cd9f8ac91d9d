//! `$ref` resolution and the schema rewrites behind `$ref`, `allOf`, `anyOf`
//! and `oneOf`: the referenced or chosen schemas are merged shallowly into the
//! referring one, which is then generated afresh.

use serde_json::{Map, Value};

use super::{Ctx, Generator, MAX_DEPTH, MAX_REF_DEPTH, simplest};

/// Keywords that never influence the generated value; merged schemas drop
/// them (references are always resolved against the root, so `$defs` can go).
const INERT_KEYWORDS: [&str; 7] = [
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
];

impl<'a> Generator<'a> {
    /// The value for a schema carrying `$ref`, `allOf`, `anyOf` or `oneOf`
    /// (in that order of precedence), or `None` when there is nothing to rewrite.
    pub(super) fn rewrite(
        &mut self,
        schema: &Value,
        obj: &Map<String, Value>,
        ctx: Ctx,
    ) -> Option<Value> {
        if let Some(Value::String(reference)) = obj.get("$ref") {
            let mut merged = without(obj, "$ref");
            if let Some(target) = self.resolve(reference) {
                if matches!(target, Value::Bool(false)) {
                    return Some(simplest(schema, ctx));
                }
                self.absorb(&mut merged, target, ctx.ref_depth + 1);
            }
            return Some(self.generate_merged(merged, ctx.through_ref()));
        }

        if let Some(Value::Array(branches)) = obj.get("allOf") {
            let mut merged = without(obj, "allOf");
            for branch in branches {
                self.absorb(&mut merged, branch, ctx.ref_depth);
            }
            return Some(self.generate_merged(merged, ctx.rewritten()));
        }

        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(key)
                && let Some(chosen) = self.choose_branch(branches, ctx)
            {
                let mut merged = without(obj, key);
                self.absorb(&mut merged, chosen, ctx.ref_depth);
                return Some(self.generate_merged(merged, ctx.rewritten()));
            }
        }
        None
    }

    /// Generates from a merged schema, paying for its keys.
    fn generate_merged(&mut self, merged: Map<String, Value>, ctx: Ctx) -> Value {
        self.charge(merged.len());
        self.generate(&Value::Object(merged), ctx)
    }

    /// Resolves a local reference against the root schema.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let fragment = reference.strip_prefix('#')?;
        if fragment.is_empty() {
            return Some(self.root);
        }
        if !fragment.starts_with('/') {
            return None;
        }
        self.root.pointer(&percent_decode(fragment))
    }

    /// `schema` followed by the targets of its `$ref` chain (at most
    /// `MAX_REF_DEPTH` hops, stopping at the first unresolvable reference).
    fn ref_chain<'s>(&'s self, schema: &'s Value) -> impl Iterator<Item = &'s Value> {
        std::iter::successors(Some(schema), |current| {
            current
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|reference| self.resolve(reference))
        })
        .take(MAX_REF_DEPTH + 1)
    }

    /// Shallow-merges `branch` (and, recursively, its `$ref` target and
    /// `allOf` branches) into `base`.
    pub(super) fn absorb(&mut self, base: &mut Map<String, Value>, branch: &Value, hops: usize) {
        if self.budget == 0 {
            return;
        }
        self.charge(1);
        let Value::Object(branch) = branch else {
            return;
        };
        for (key, value) in branch {
            if key == "$ref" || key == "allOf" || INERT_KEYWORDS.contains(&key.as_str()) {
                continue;
            }
            self.charge_size(value);
            merge_key(base, key, value);
        }
        if hops >= MAX_REF_DEPTH {
            return;
        }
        if let Some(Value::String(reference)) = branch.get("$ref")
            && let Some(target) = self.resolve(reference)
        {
            self.absorb(base, target, hops + 1);
        }
        if let Some(Value::Array(branches)) = branch.get("allOf") {
            for nested in branches {
                self.absorb(base, nested, hops + 1);
            }
        }
    }

    /// Picks the `anyOf`/`oneOf` branch to generate from.
    fn choose_branch<'s>(&self, branches: &'s [Value], ctx: Ctx) -> Option<&'s Value> {
        let exhausted = ctx.ref_depth + 1 >= MAX_REF_DEPTH || ctx.depth + 8 >= MAX_DEPTH;
        let null_branch = branches.iter().find(|b| self.is_null_schema(b));
        if exhausted && null_branch.is_some() {
            return null_branch;
        }
        branches
            .iter()
            .find(|b| !self.is_null_schema(b) && !matches!(b, Value::Bool(false)))
            .or(null_branch)
            .or_else(|| branches.first())
    }

    /// Whether a branch only admits `null`.
    fn is_null_schema(&self, branch: &Value) -> bool {
        let Some(Value::Object(obj)) = self.ref_chain(branch).last() else {
            return false;
        };
        if let Some(constant) = obj.get("const") {
            return constant.is_null();
        }
        if let Some(Value::Array(values)) = obj.get("enum")
            && !values.is_empty()
        {
            return values.iter().all(Value::is_null);
        }
        match obj.get("type") {
            Some(Value::String(t)) => t == "null",
            Some(Value::Array(types)) => {
                !types.is_empty() && types.iter().all(|t| t.as_str() == Some("null"))
            }
            _ => false,
        }
    }

    /// Whether an optional property carries a `default` (directly or through `$ref`).
    pub(super) fn has_default(&self, schema: &Value) -> bool {
        self.ref_chain(schema)
            .any(|current| current.get("default").is_some())
    }
}

/// The schema with one keyword (and the inert ones) removed.
fn without(obj: &Map<String, Value>, key: &str) -> Map<String, Value> {
    obj.iter()
        .filter(|(k, _)| k.as_str() != key && !INERT_KEYWORDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Merges one keyword of an `allOf`/`$ref`/`anyOf` branch into the base schema.
fn merge_key(base: &mut Map<String, Value>, key: &str, value: &Value) {
    const LOWER: [&str; 6] = [
        "minimum",
        "exclusiveMinimum",
        "minLength",
        "minItems",
        "minProperties",
        "minContains",
    ];
    const UPPER: [&str; 6] = [
        "maximum",
        "exclusiveMaximum",
        "maxLength",
        "maxItems",
        "maxProperties",
        "maxContains",
    ];
    let Some(existing) = base.get_mut(key) else {
        base.insert(key.to_owned(), value.clone());
        return;
    };
    match (key, existing, value) {
        ("properties", Value::Object(mine), Value::Object(theirs)) => {
            for (name, schema) in theirs {
                if !mine.contains_key(name) {
                    mine.insert(name.clone(), schema.clone());
                }
            }
        }
        ("required", Value::Array(mine), Value::Array(theirs)) => {
            for name in theirs {
                if !mine.contains(name) {
                    mine.push(name.clone());
                }
            }
        }
        ("additionalProperties" | "unevaluatedProperties", existing, Value::Bool(false)) => {
            *existing = Value::Bool(false);
        }
        (key, existing, value) => {
            let tighter = match (existing.as_f64(), value.as_f64()) {
                (Some(mine), Some(theirs)) if LOWER.contains(&key) => theirs > mine,
                (Some(mine), Some(theirs)) if UPPER.contains(&key) => theirs < mine,
                _ => false,
            };
            if tighter {
                *existing = value.clone();
            }
        }
    }
}

/// Decodes `%XX` escapes in a JSON-pointer fragment.
fn percent_decode(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let escaped = match (byte, bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&high), Some(&low)) => hex_digit(high).zip(hex_digit(low)),
            _ => None,
        };
        match escaped {
            Some((high, low)) => {
                out.push(high * 16 + low);
                i += 3;
            }
            None => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| fragment.to_owned())
}

/// The value of one hexadecimal digit.
fn hex_digit(byte: u8) -> Option<u8> {
    char::from(byte)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::schema_args::generate_args;
    use crate::schema_args::tests::{valid_for_seeds, x_of};

    #[test]
    fn refs_and_definitions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/Point"},
                "b": {"$ref": "#/definitions/Color"},
                "c": {"$ref": "#/$defs/Alias"},
                "d": {"$ref": "#/$defs/With%20Space"},
                "e": {"$ref": "#/$defs/a~1b"}
            },
            "required": ["a", "b", "c", "d", "e"],
            "additionalProperties": false,
            "$defs": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "integer", "minimum": 3}, "y": {"type": "number"}},
                    "required": ["x", "y"],
                    "additionalProperties": false
                },
                "Alias": {"$ref": "#/$defs/Point"},
                "With Space": {"type": "string", "format": "date"},
                "a/b": {"type": "boolean"}
            },
            "definitions": {"Color": {"enum": ["red", "green", "blue"]}}
        });
        let value = valid_for_seeds(&schema);
        assert_eq!(value["a"], json!({"x": 3, "y": 1}));
        assert_eq!(value["b"], "red");
        assert_eq!(value["d"], "2026-01-01");
        assert_eq!(value["e"], false);
    }

    #[test]
    fn ref_with_sibling_default_and_root_ref() {
        let schema = json!({
            "$ref": "#/$defs/Args",
            "$defs": {
                "Args": {
                    "type": "object",
                    "properties": {
                        "mode": {"$ref": "#/$defs/Mode", "default": "slow"},
                        "inherited": {"$ref": "#/$defs/Defaulted"}
                    },
                    "additionalProperties": false
                },
                "Mode": {"type": "string", "enum": ["fast", "slow"]},
                "Defaulted": {"type": "integer", "default": 42}
            }
        });
        assert_eq!(
            valid_for_seeds(&schema),
            json!({"mode": "slow", "inherited": 42})
        );
    }

    #[test]
    fn cyclic_refs_terminate() {
        let list = json!({
            "$ref": "#/$defs/Node",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer"},
                        "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                    },
                    "required": ["value", "next", "children"],
                    "additionalProperties": false
                }
            }
        });
        let value = valid_for_seeds(&list);
        assert!(value["next"].is_object());

        let tree = json!({
            "$ref": "#/$defs/Tree",
            "$defs": {"Tree": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}, "minItems": 2}},
                "required": ["kids"]
            }}
        });
        // Unsatisfiable by finite values; must still terminate quickly.
        let value = generate_args(&tree, 1);
        assert!(value.is_object());

        for schema in [
            json!({"$ref": "#"}),
            json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}),
            json!({"allOf": [{"$ref": "#"}, {"$ref": "#"}]}),
            json!({"anyOf": [{"$ref": "#"}]}),
            json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}),
            json!({"type": "array", "minItems": 100, "items": {"$ref": "#"}}),
        ] {
            let value = generate_args(&schema, 5);
            assert_eq!(value, generate_args(&schema, 5));
        }
    }

    #[test]
    fn any_one_all_of() {
        assert_eq!(
            x_of(json!({"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 4}]})),
            4
        );
        assert_eq!(
            x_of(json!({"oneOf": [{"type": "string", "maxLength": 1}, {"type": "integer"}]})),
            "t"
        );
        x_of(json!({"oneOf": [{"type": "null"}]}));
        x_of(json!({"anyOf": [false, {"type": "boolean"}]}));
        let merged = x_of(json!({
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer", "minimum": 2}}, "required": ["b"]}
            ]
        }));
        assert_eq!(merged, json!({"a": "test", "b": 2}));
        x_of(json!({"allOf": [{"type": "integer", "minimum": 3}, {"minimum": 5}, {"maximum": 9}]}));
        x_of(json!({"allOf": [{"allOf": [{"type": "string"}, {"minLength": 6}]}]}));
        x_of(json!({
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "required": ["kind"],
            "oneOf": [{"required": ["a"], "properties": {"a": {"type": "integer"}}}]
        }));
    }

    #[test]
    fn ref_targets_in_nested_with_prop() {
        let schema = json!({
            "type": "object",
            "properties": {"x": {"allOf": [{"$ref": "#/$defs/C"}]}},
            "required": ["x"],
            "$defs": {"C": {"properties": {"c": {"type": "boolean"}}, "required": ["c"]}}
        });
        assert_eq!(valid_for_seeds(&schema), json!({"x": {"c": false}}));
    }
}
