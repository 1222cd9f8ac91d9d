//! The lean form of a JSON Schema: what a model is sent about a tool's arguments (and a
//! worker's structured answer), without what no model needs. Every request of a session carries
//! every tool's schema, so each byte is paid for again and again.
//!
//! The full schema stays what it is and is what validates a call, fills a form and types a
//! slash command's text ([`crate::registry`], [`crate::fields`], [`crate::coerce`]); the lean
//! one is derived from it and only sent. [`lean_schema`] allows no value the full one refuses
//! (an optional field is told as its plain type, while the full schema also accepts an explicit
//! `null`), and it names the same properties, the same required ones and the same types. What
//! goes, at every schema position (never inside data such as `enum`, `const`, `default` or
//! `examples`, and never a property that happens to be called `title`):
//!
//! - `$schema` and `title` (a generated type name such as `ShellArgs`, or a label);
//! - `default: null`, and an optional property's `default` of `false`, `[]` or `{}` (what
//!   leaving it out means to anyone); other defaults stay, as they say what leaving it out means;
//! - a `format` that JSON Schema does not define (`uint64`, `int32`, `double`, …), which only
//!   says the Rust type a value is read into (the standard formats, [`STANDARD_FORMATS`], stay);
//! - `type` beside a `const` of that type (the `const` already says it);
//! - for a property its object does not require, the `null` of a nullable type
//!   (`type: [X, "null"]`, `anyOf: [X, {type: null}]`, `null` in an `enum`): the model leaves
//!   such a field out; the description of the property wins over that of the type it unwraps;
//! - a local definition (`$defs` or `definitions`) referenced exactly once and itself free of
//!   references, inlined where it is used, the description at the use winning;
//! - a `oneOf` of string `const`s becomes an `enum` when no choice's description says more than
//!   the node's own (a choice's description that only repeats its value, or a node's
//!   description that names every value).
//!
//! [`lean_tool_schema`] also drops the root `description` (a tool's own description is what
//! describes it, and an argument type's doc comment only says it again) and
//! `additionalProperties: false` (the model sends the properties it is told of; the full schema
//! still refuses any other). A structured answer's schema keeps both: OpenAI's strict mode
//! needs a closed object. `minimum: 0` of an unsigned field stays: it is standard, and it tells
//! the model something true.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

/// The `format` values the JSON Schema specification defines (draft 2020-12, section 7.3),
/// which models and validators understand; any other `format` is left out of a lean schema.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Keywords whose value is a list of schemas (`items` too, in drafts before 2020-12).
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Keywords whose value maps names to schemas (`dependencies` maps to a schema or a list of
/// names; only its schemas are schemas).
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Keywords that make a local reference mean something other than a path from the root; a
/// schema with any of them has no definition inlined.
const SCOPE_KEYWORDS: &[&str] = &["$id", "id", "$anchor", "$dynamicRef", "$recursiveRef"];

/// Keywords whose value maps names (of properties, definitions) to schemas: their keys are not
/// keywords.
const NAME_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The lean form of `schema` (see the module's documentation). Deterministic: the same schema
/// always gives the same bytes, keys in their order.
pub fn lean_schema(schema: &Value) -> Value {
    let mut lean = lean_pass(schema);
    // A definition whose only reference was inlined into it may be inlined in turn: passes
    // until nothing more is, at most one per definition.
    for _ in 0..definition_count(schema) {
        let again = lean_pass(&lean);
        if again == lean {
            break;
        }
        lean = again;
    }
    lean
}

fn lean_pass(schema: &Value) -> Value {
    let defs = Inliner::new(schema);
    let mut inlined = HashSet::new();
    let mut lean = lean_node(schema, false, &defs, &mut inlined);
    drop_inlined_definitions(&mut lean, &inlined);
    lean
}

fn definition_count(schema: &Value) -> usize {
    ["$defs", "definitions"]
        .iter()
        .filter_map(|section| schema.get(section).and_then(Value::as_object))
        .map(Map::len)
        .sum()
}

/// The lean form of a tool's input schema: [`lean_schema`] without the root `description`,
/// which the tool's own description makes a second one.
pub fn lean_tool_schema(schema: &Value) -> Value {
    let mut lean = lean_schema(schema);
    without_closed_objects(&mut lean);
    if let Value::Object(map) = &mut lean {
        map.shift_remove("description");
    }
    lean
}

/// Removes every `additionalProperties: false`: the properties a tool's schema names are what
/// a model sends, and the full schema still refuses any other, saying which. (A structured
/// answer keeps it: OpenAI's strict mode needs it.)
fn without_closed_objects(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.get("additionalProperties") == Some(&Value::Bool(false)) {
        map.shift_remove("additionalProperties");
    }
    for (key, value) in map.iter_mut() {
        for_each_subschema_mut(key, value, &mut without_closed_objects);
    }
}

/// [`for_each_subschema`], mutably and without pointers.
fn for_each_subschema_mut(key: &str, value: &mut Value, visit: &mut dyn FnMut(&mut Value)) {
    if ONE_SCHEMA.contains(&key) && value.is_object() {
        visit(value);
    }
    if SCHEMA_LISTS.contains(&key)
        && let Value::Array(items) = value
    {
        for item in items.iter_mut() {
            visit(item);
        }
    }
    if SCHEMA_MAPS.contains(&key)
        && let Value::Object(children) = value
    {
        for child in children.values_mut().filter(|child| child.is_object()) {
            visit(child);
        }
    }
}

/// Where `schema` carries a keyword a lean schema leaves out (`title`, `$schema`,
/// `default: null`, a non-standard `format`), as JSON pointers to the keyword; empty for a
/// lean schema. Only schema positions are looked at.
pub fn non_standard_keywords(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    find_non_standard(schema, "", &mut found);
    found
}

fn find_non_standard(schema: &Value, at: &str, found: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        let here = format!("{at}/{}", escape(key));
        if dropped_keyword(key, value) {
            found.push(here.clone());
        }
        for_each_subschema(key, value, &here, &mut |child, child_at| {
            find_non_standard(child, child_at, found);
        });
    }
}

/// Calls `visit` with every schema directly under the keyword `key` (valued `value`) and its
/// pointer.
fn for_each_subschema(key: &str, value: &Value, at: &str, visit: &mut dyn FnMut(&Value, &str)) {
    if ONE_SCHEMA.contains(&key) && value.is_object() {
        visit(value, at);
    }
    if SCHEMA_LISTS.contains(&key)
        && let Value::Array(items) = value
    {
        for (index, item) in items.iter().enumerate() {
            visit(item, &format!("{at}/{index}"));
        }
    }
    if SCHEMA_MAPS.contains(&key)
        && let Value::Object(children) = value
    {
        for (name, child) in children {
            if child.is_object() {
                visit(child, &format!("{at}/{}", escape(name)));
            }
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether the keyword `key` with `value` is one a lean schema leaves out wherever it is.
fn dropped_keyword(key: &str, value: &Value) -> bool {
    match key {
        "$schema" | "title" => true,
        "default" => value.is_null(),
        "format" => value
            .as_str()
            .is_some_and(|format| !STANDARD_FORMATS.contains(&format)),
        _ => false,
    }
}

/// The lean form of one schema node. `optional`: the node is a property its object does not
/// require, whose `null` the model need not be told about.
fn lean_node(
    schema: &Value,
    optional: bool,
    defs: &Inliner<'_>,
    inlined: &mut HashSet<String>,
) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let map = defs.splice(map, inlined);
    let required: Vec<&str> = match map.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        Some(_) | None => Vec::new(),
    };
    let mut out = Map::new();
    for (key, value) in map.iter() {
        if dropped_keyword(key, value)
            || (key == "type" && map.get("const").is_some_and(|c| is_of_type(c, value)))
            || (optional && key == "default" && is_empty_default(value))
        {
            continue;
        }
        let lean = if key == "properties"
            && let Value::Object(properties) = value
        {
            Value::Object(
                properties
                    .iter()
                    .map(|(name, property)| {
                        let optional = !required.contains(&name.as_str());
                        (name.clone(), lean_node(property, optional, defs, inlined))
                    })
                    .collect(),
            )
        } else {
            lean_children(key, value, defs, inlined)
        };
        out.insert(key.clone(), lean);
    }
    let out = if optional { without_null(out) } else { out };
    Value::Object(choices_as_enum(out))
}

/// A `oneOf` (or `anyOf`) whose every branch is a string `const`, perhaps described, as an
/// `enum` in its place, when no branch's description says more than the node's own: a
/// branch's description that only repeats its value (`` `origin`. ``) goes first, and the
/// others go when the node's description names every value. Validates the same.
fn choices_as_enum(mut map: Map<String, Value>) -> Map<String, Value> {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(branches)) = map.get(key) else {
            continue;
        };
        let mut values = Vec::new();
        let mut described = false;
        for branch in branches {
            let Some(Value::String(value)) = branch.get("const") else {
                return map;
            };
            let Some(fields) = branch.as_object() else {
                return map;
            };
            if fields.keys().any(|k| k != "const" && k != "description") {
                return map;
            }
            if let Some(text) = fields.get("description").and_then(Value::as_str)
                && !only_repeats(text, value)
            {
                described = true;
            }
            values.push(value.as_str());
        }
        if values.is_empty() || map.contains_key("enum") {
            continue;
        }
        if described {
            let Some(own) = map.get("description").and_then(Value::as_str) else {
                continue;
            };
            if !values.iter().all(|value| own.contains(value)) {
                continue;
            }
        }
        let values: Value = values.into_iter().map(Value::from).collect();
        map = map
            .into_iter()
            .map(|(k, v)| {
                if k == key {
                    ("enum".to_owned(), values.clone())
                } else {
                    (k, v)
                }
            })
            .collect();
    }
    map
}

/// Whether a choice's description `text` says nothing but its value.
fn only_repeats(text: &str, value: &str) -> bool {
    text.trim()
        .trim_end_matches('.')
        .trim_matches(|c| c == '`' || c == '"' || c == '\'')
        == value
}

/// The value of the keyword `key` with every schema under it made lean.
fn lean_children(
    key: &str,
    value: &Value,
    defs: &Inliner<'_>,
    inlined: &mut HashSet<String>,
) -> Value {
    match value {
        Value::Object(_) if ONE_SCHEMA.contains(&key) => lean_node(value, false, defs, inlined),
        Value::Array(items) if SCHEMA_LISTS.contains(&key) => Value::Array(
            items
                .iter()
                .map(|item| lean_node(item, false, defs, inlined))
                .collect(),
        ),
        Value::Object(children) if SCHEMA_MAPS.contains(&key) => Value::Object(
            children
                .iter()
                .map(|(name, child)| (name.clone(), lean_node(child, false, defs, inlined)))
                .collect(),
        ),
        _ => value.clone(),
    }
}

/// Whether `value`, an optional property's `default`, is what leaving it out means to anyone:
/// `false`, `[]` or `{}`.
fn is_empty_default(value: &Value) -> bool {
    match value {
        Value::Bool(flag) => !flag,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        Value::Null | Value::Number(_) | Value::String(_) => false,
    }
}

/// Whether `value` (a `const`) is of the JSON type `kind` names (a single type name).
fn is_of_type(value: &Value, kind: &Value) -> bool {
    match kind.as_str() {
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("null") => value.is_null(),
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some(_) | None => false,
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.as_object().is_some_and(|map| {
        map.len() == 1 && map.get("type").and_then(Value::as_str) == Some("null")
    })
}

/// An optional property's schema without its `null`: `type: [X, "null"]` is `X`, an `enum`
/// loses its `null`, and `anyOf`/`oneOf` with a `{type: null}` branch loses it (one branch
/// left is merged into the property, whose own keywords win). A schema that is only `null`
/// stays.
fn without_null(mut map: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if !kept.is_empty() && kept.len() < types.len() {
            let kind = match <[Value; 1]>::try_from(kept) {
                Ok([one]) => one,
                Err(kept) => Value::Array(kept),
            };
            map.insert("type".to_owned(), kind);
            if let Some(Value::Array(values)) = map.get_mut("enum")
                && values.iter().any(|v| !v.is_null())
            {
                values.retain(|v| !v.is_null());
            }
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get(key) else {
            continue;
        };
        if branches.len() < 2 || !branches.iter().any(is_null_schema) {
            continue;
        }
        let kept: Vec<Value> = branches
            .iter()
            .filter(|b| !is_null_schema(b))
            .cloned()
            .collect();
        if let [Value::Object(only)] = kept.as_slice()
            && only
                .keys()
                .all(|k| k == "description" || !map.contains_key(k))
        {
            map = merged_at(&map, key, only);
        } else if !kept.is_empty() {
            map.insert(key.to_owned(), Value::Array(kept));
        }
    }
    map
}

/// `map` with the entries of `branch` in place of its keyword `key`; a key `map` has already
/// keeps `map`'s value.
fn merged_at(
    map: &Map<String, Value>,
    key: &str,
    branch: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in map {
        if k == key {
            for (bk, bv) in branch {
                if !map.contains_key(bk) {
                    out.insert(bk.clone(), bv.clone());
                }
            }
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// The root's definitions that may be inlined: each referenced exactly once in the document
/// (counting every `$ref` anywhere, so a reference inside data only keeps one from being
/// inlined), itself an object schema with no reference in it, in a document that changes no
/// base address. Keyed by the reference that names it (`#/$defs/Name`).
struct Inliner<'a> {
    inlinable: HashMap<String, &'a Map<String, Value>>,
}

impl<'a> Inliner<'a> {
    fn new(root: &'a Value) -> Self {
        let mut inlinable = HashMap::new();
        let Value::Object(map) = root else {
            return Self { inlinable };
        };
        let mut refs: HashMap<String, usize> = HashMap::new();
        if !count_refs(root, false, &mut refs) {
            return Self { inlinable };
        }
        for section in ["$defs", "definitions"] {
            let Some(Value::Object(defs)) = map.get(section) else {
                continue;
            };
            for (name, def) in defs {
                let reference = format!("#/{section}/{}", escape(name));
                if let Value::Object(body) = def
                    && refs.get(&reference) == Some(&1)
                    && !has_ref(def)
                {
                    inlinable.insert(reference, body);
                }
            }
        }
        Self { inlinable }
    }

    /// `map` with an inlinable `$ref` replaced by its definition's keywords where the
    /// reference was (the use's own keywords win over the definition's `description`,
    /// `title` and `default`); any other keyword both have keeps the reference as it is.
    fn splice(
        &self,
        map: &Map<String, Value>,
        inlined: &mut HashSet<String>,
    ) -> Map<String, Value> {
        let Some(Value::String(reference)) = map.get("$ref") else {
            return map.clone();
        };
        let Some(body) = self.inlinable.get(reference) else {
            return map.clone();
        };
        let clash = body.iter().any(|(k, v)| {
            map.get(k).is_some_and(|mine| {
                !matches!(k.as_str(), "description" | "title" | "default") && mine != v
            })
        });
        if clash {
            return map.clone();
        }
        inlined.insert(reference.clone());
        merged_at(map, "$ref", body)
    }
}

/// Counts every `$ref` string anywhere in `value` (whose keys are names, not keywords, when
/// `names`); `false` when the document has a reference that is not to a root definition, or a
/// keyword that changes what references mean.
fn count_refs(value: &Value, names: bool, refs: &mut HashMap<String, usize>) -> bool {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if names {
                    if !count_refs(child, false, refs) {
                        return false;
                    }
                    continue;
                }
                if SCOPE_KEYWORDS.contains(&key.as_str()) {
                    return false;
                }
                if key == "$ref" {
                    let Some(reference) = child.as_str() else {
                        return false;
                    };
                    if !(reference.starts_with("#/$defs/")
                        || reference.starts_with("#/definitions/"))
                    {
                        return false;
                    }
                    *refs.entry(reference.to_owned()).or_default() += 1;
                } else if !count_refs(child, NAME_MAPS.contains(&key.as_str()), refs) {
                    return false;
                }
            }
            true
        }
        Value::Array(items) => items.iter().all(|item| count_refs(item, false, refs)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => true,
    }
}

fn has_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| k == "$ref" || has_ref(v)),
        Value::Array(items) => items.iter().any(has_ref),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => false,
    }
}

/// Removes from the root's `$defs` and `definitions` what was inlined (and the section when
/// nothing is left in it).
fn drop_inlined_definitions(schema: &mut Value, inlined: &HashSet<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    for section in ["$defs", "definitions"] {
        let Some(Value::Object(defs)) = map.get_mut(section) else {
            continue;
        };
        defs.retain(|name, _| !inlined.contains(&format!("#/{section}/{}", escape(name))));
        if defs.is_empty() {
            map.shift_remove(section);
        }
    }
}

#[cfg(test)]
mod tests;
