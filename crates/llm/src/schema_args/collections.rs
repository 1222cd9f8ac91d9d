//! Arrays and objects: which items and keys to emit, and which subschema each
//! one is generated from.

use serde_json::{Map, Value};

use super::{Ctx, Generator, MAX_ARRAY_ITEMS, get_usize};

impl Generator<'_> {
    /// An object with the `required` keys, the optional properties that have a
    /// `default`, the keys `dependentRequired` pulls in, and enough more to
    /// reach `minProperties`; keys follow the schema's property order.
    pub(super) fn object(&mut self, obj: &Map<String, Value>, ctx: Ctx) -> Value {
        let empty = Map::new();
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let closed = matches!(obj.get("additionalProperties"), Some(Value::Bool(false)))
            || matches!(obj.get("unevaluatedProperties"), Some(Value::Bool(false)));
        let extra_schema = match obj.get("additionalProperties") {
            Some(schema @ Value::Object(_)) => schema,
            _ => &Value::Bool(true),
        };
        let min_props = get_usize(obj, "minProperties")
            .unwrap_or(0)
            .min(MAX_ARRAY_ITEMS);
        let max_props = get_usize(obj, "maxProperties").unwrap_or(usize::MAX);

        // Which keys to emit (in discovery order; emission follows the schema).
        let mut keys: Vec<&str> = Vec::new();
        if let Some(Value::Array(required)) = obj.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                add_key(&mut keys, name);
            }
        }
        for (name, sub) in props {
            if keys.len() >= max_props {
                break;
            }
            if self.has_default(sub) {
                add_key(&mut keys, name);
            }
        }
        if let Some(Value::Object(dependencies)) = obj.get("dependentRequired") {
            let mut index = 0;
            while index < keys.len() && keys.len() <= MAX_ARRAY_ITEMS {
                if let Some(Value::Array(needed)) = dependencies.get(keys[index]) {
                    for name in needed.iter().filter_map(Value::as_str) {
                        add_key(&mut keys, name);
                    }
                }
                index += 1;
            }
        }
        for name in props.keys() {
            if keys.len() >= min_props {
                break;
            }
            add_key(&mut keys, name);
        }

        let mut out = Map::new();
        for (name, sub) in props {
            if keys.contains(&name.as_str()) {
                let value = self.generate(sub, ctx.child());
                out.insert(name.clone(), value);
            }
        }
        if !closed {
            for name in &keys {
                if !out.contains_key(*name) {
                    let value = self.generate(extra_schema, ctx.child());
                    out.insert((*name).to_owned(), value);
                }
            }
            let mut counter = 1_usize;
            while out.len() < min_props && counter <= 2 * MAX_ARRAY_ITEMS {
                let name = format!("property{counter}");
                counter += 1;
                if !out.contains_key(&name) {
                    let value = self.generate(extra_schema, ctx.child());
                    out.insert(name, value);
                }
            }
        }
        Value::Object(out)
    }

    /// An array of `minItems` items (at least `minContains` when `contains`
    /// is set, at most `MAX_ARRAY_ITEMS`), made distinct for `uniqueItems`.
    pub(super) fn array(&mut self, obj: &Map<String, Value>, ctx: Ctx) -> Value {
        let contains = obj
            .get("contains")
            .filter(|c| !matches!(c, Value::Bool(false)));
        let min_contains = match contains {
            Some(_) => get_usize(obj, "minContains").unwrap_or(1),
            None => 0,
        };
        let count = get_usize(obj, "minItems")
            .unwrap_or(0)
            .max(min_contains)
            .min(MAX_ARRAY_ITEMS);

        let (prefix, rest): (&[Value], Option<&Value>) =
            match (obj.get("prefixItems"), obj.get("items")) {
                (Some(Value::Array(prefix)), items) => (prefix, items),
                (_, Some(Value::Array(tuple))) => (tuple, obj.get("additionalItems")),
                (_, items) => (&[], items),
            };
        let rest = rest.unwrap_or(&Value::Bool(true));
        let contained = contains.map(|c| {
            let mut merged = match rest {
                Value::Object(items) => items.clone(),
                _ => Map::new(),
            };
            self.absorb(&mut merged, c, ctx.ref_depth);
            Value::Object(merged)
        });
        let unique = matches!(obj.get("uniqueItems"), Some(Value::Bool(true)));

        let mut items: Vec<Value> = Vec::with_capacity(count);
        for index in 0..count {
            let schema = match prefix.get(index) {
                Some(schema) => schema,
                None => match &contained {
                    Some(merged) if index < prefix.len() + min_contains => merged,
                    _ => rest,
                },
            };
            let variant = if unique {
                ctx.variant
                    .wrapping_mul(MAX_ARRAY_ITEMS as u64 + 1)
                    .wrapping_add(index as u64)
            } else {
                ctx.variant
            };
            let item = self.generate(schema, ctx.child().with_variant(variant));
            items.push(item);
        }
        Value::Array(items)
    }
}

/// Appends `name` to the keys to emit unless it is already there.
fn add_key<'k>(keys: &mut Vec<&'k str>, name: &'k str) {
    if !keys.contains(&name) {
        keys.push(name);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::schema_args::tests::{valid, valid_for_seeds, with_prop, x_of};
    use crate::schema_args::{MAX_ARRAY_ITEMS, generate_args};

    #[test]
    fn empty_object_schema_gives_empty_object() {
        let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        assert_eq!(valid_for_seeds(&schema), json!({}));
    }

    #[test]
    fn required_only_and_defaults() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer", "default": 10},
                "verbose": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "count": {"type": "integer"},
                "flag": {"type": "boolean", "default": true}
            },
            "required": ["count", "path", "mode"],
            "additionalProperties": false
        });
        let value = valid(&schema, 0);
        assert_eq!(
            value,
            json!({"path": "test", "limit": 10, "mode": "fast", "count": 1, "flag": true})
        );
        let keys: Vec<&String> = value.as_object().map(|o| o.keys().collect()).unwrap();
        assert_eq!(keys, ["path", "limit", "mode", "count", "flag"]);
        valid_for_seeds(&schema);
    }

    #[test]
    fn arrays() {
        assert_eq!(
            x_of(json!({"type": "array", "items": {"type": "string"}})),
            json!([])
        );
        assert_eq!(
            x_of(json!({"type": "array", "items": {"type": "integer"}, "minItems": 2})),
            json!([1, 1])
        );
        assert_eq!(
            x_of(
                json!({"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": true})
            ),
            json!([1, 2, 3])
        );
        x_of(
            json!({"type": "array", "items": {"type": "string"}, "minItems": 30, "uniqueItems": true}),
        );
        x_of(
            json!({"type": "array", "items": {"type": "string", "maxLength": 2}, "minItems": 30, "uniqueItems": true}),
        );
        x_of(
            json!({"type": "array", "items": {"type": "string", "format": "uuid"}, "minItems": 5, "uniqueItems": true}),
        );
        x_of(
            json!({"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 3, "uniqueItems": true}),
        );
        x_of(
            json!({"type": "array", "items": {"type": "boolean"}, "minItems": 2, "uniqueItems": true}),
        );
        x_of(
            json!({"type": "array", "items": {"type": "integer", "maximum": 2}, "minItems": 3, "uniqueItems": true}),
        );
        x_of(json!({
            "type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            "minItems": 3,
            "uniqueItems": true
        }));
        x_of(json!({
            "type": "array",
            "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "uniqueItems": true},
            "minItems": 3,
            "uniqueItems": true
        }));
        x_of(
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 3, "items": {"type": "boolean"}}),
        );
        x_of(json!({"type": "array", "contains": {"type": "integer", "minimum": 7}}));
        x_of(
            json!({"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 7}, "minContains": 2}),
        );
        // Past the cap the array is truncated (and so cannot validate).
        let big = generate_args(
            &with_prop(json!({"type": "array", "minItems": 1_000_000})),
            0,
        );
        assert_eq!(big["x"].as_array().unwrap().len(), MAX_ARRAY_ITEMS);
    }

    #[test]
    fn draft7_tuple_items() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "items": [{"type": "string"}, {"type": "integer"}],
            "additionalItems": {"type": "boolean"},
            "minItems": 3
        });
        assert_eq!(valid_for_seeds(&schema), json!(["test", 1, false]));
    }

    #[test]
    fn objects_min_max_properties_and_dependencies() {
        x_of(
            json!({"type": "object", "minProperties": 2, "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {}}}),
        );
        x_of(
            json!({"type": "object", "minProperties": 3, "additionalProperties": {"type": "integer"}}),
        );
        x_of(json!({"type": "object", "minProperties": 2}));
        x_of(json!({
            "type": "object",
            "maxProperties": 1,
            "properties": {"a": {"default": 1}, "b": {"default": 2}}
        }));
        x_of(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
            "required": ["a"],
            "dependentRequired": {"a": ["b"], "b": ["c"]},
            "additionalProperties": false
        }));
        let nested = x_of(json!({
            "type": "object",
            "required": ["extra"],
            "additionalProperties": {"type": "string", "format": "email"}
        }));
        assert_eq!(nested, json!({"extra": "user@example.com"}));
        // A required key outside `properties` with `additionalProperties: false`
        // cannot be satisfied; no extra key is added regardless.
        let closed = generate_args(
            &json!({"type": "object", "required": ["ghost"], "additionalProperties": false}),
            0,
        );
        assert_eq!(closed, json!({}));
    }
}
