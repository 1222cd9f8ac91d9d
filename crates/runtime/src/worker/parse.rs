//! Reading a worker file: split the YAML front matter from the markdown body (tolerating a
//! UTF-8 BOM and CRLF line endings), deserialize the front matter with every key checked, and
//! build the [`WorkerDefinition`].

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use golem_sandbox::{ZoneConfig, ZoneMode, ZoneOverlap};
use schemars::JsonSchema;
use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::definition::{WorkerDefinition, WorkerMode, WorkerOutput};
use super::error::WorkerFileError;
use super::name::{corrected_name, is_valid_worker_name, name_problem};
use super::yaml::{self, TextFileProblem, or_default, read_text_file};
use crate::budget::BudgetLimits;
use crate::context_settings::ContextSettings;
use crate::toolsets::ToolsetsConfig;

/// The extension of worker files.
pub const WORKER_EXTENSION: &str = "worker";

/// Reads and parses the worker file at `path`.
pub fn load_worker(path: &Path) -> Result<WorkerDefinition, WorkerFileError> {
    let text = read_text_file(path).map_err(|problem| match problem {
        TextFileProblem::Read(source) => WorkerFileError::Read {
            path: path.to_owned(),
            source,
        },
        TextFileProblem::NotUtf8 { line } => {
            WorkerFileError::invalid(path, line, None, TextFileProblem::NOT_UTF8)
        }
    })?;
    parse_worker(&text, path)
}

/// Parses the text of a worker file; `path` names it in errors and anchors its zones.
pub fn parse_worker(text: &str, path: &Path) -> Result<WorkerDefinition, WorkerFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text: Cow<'_, str> = if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    };
    let parts = split_front_matter(&text)
        .map_err(|(line, message)| WorkerFileError::invalid(path, line, None, message))?;
    if is_blank_yaml(parts.yaml) {
        return Err(WorkerFileError::invalid(
            path,
            parts.open_line,
            Some("name"),
            missing_name(path),
        ));
    }
    let front: FrontMatter = yaml::from_yaml(parts.yaml, parts.open_line + 1, "front matter")
        .map_err(|mut problem| {
            if problem.message == "missing key `name`" {
                problem.message = missing_name(path);
            }
            WorkerFileError::from_yaml(path, problem)
        })?;
    Ok(WorkerDefinition {
        name: front.name,
        description: front.description,
        model: front.model,
        mode: front.mode,
        compatible_models: front.compatible_models,
        max_iterations: front.max_iterations,
        budget: front.budget,
        context: front.context,
        zones: front.sandbox.zones,
        toolsets: front.toolsets,
        output: front.output.map(|section| WorkerOutput {
            schema: section.schema,
        }),
        instructions: parts.body.trim().to_owned(),
        path: path.to_owned(),
    })
}

/// The front matter of a `.worker` file: the YAML between its `---` lines (docs/worker-file.md).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Golem Forge worker file (front matter)")]
pub(crate) struct FrontMatter {
    /// The worker's name, `[a-z][a-z0-9_]*`.
    #[serde(deserialize_with = "worker_name")]
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    name: String,
    /// Shown in listings and to delegating workers.
    #[serde(default)]
    description: Option<String>,
    /// The worker's own model, `provider:model` (default: the program config's, or
    /// `--model`).
    #[serde(default, deserialize_with = "model_name")]
    #[schemars(length(min = 1))]
    model: Option<String>,
    /// `single` (one input, one answer; the default) or `chat` (the root worker converses).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<WorkerMode>")]
    mode: WorkerMode,
    /// Globs of the models the worker works with (`anthropic:*`); absent: every model.
    #[serde(default, deserialize_with = "model_patterns")]
    #[schemars(length(min = 1))]
    compatible_models: Option<Vec<String>>,
    /// Model turns before the run fails (default 20, at least 1).
    #[serde(
        default = "default_max_iterations",
        deserialize_with = "max_iterations"
    )]
    #[schemars(with = "Option<u32>", range(min = 1))]
    max_iterations: u32,
    /// What one run of the worker may spend; unlimited when absent.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<BudgetLimits>")]
    budget: BudgetLimits,
    /// How the history is kept within the model's context window (docs/worker-file.md).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ContextSettings>")]
    context: ContextSettings,
    /// The worker's zones: the only files it can reach.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<SandboxSection>")]
    sandbox: SandboxSection,
    /// The toolsets the worker gets, each turned on by its key (even with no value).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ToolsetsConfig>")]
    toolsets: ToolsetsConfig,
    /// The final answer's shape: absent, free text; with `schema`, a JSON value valid against
    /// that JSON Schema (asked of the model natively, checked, and repaired once).
    #[serde(default)]
    output: Option<OutputSection>,
}

/// `output:` in the front matter.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OutputSection {
    /// The JSON Schema (draft 2020-12 unless `$schema` says otherwise) the final answer must
    /// be valid against.
    #[serde(deserialize_with = "json_schema")]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    schema: serde_json::Value,
}

/// `sandbox:` in the front matter.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SandboxSection {
    /// The zones, each a directory the worker sees at `/<name>`; names are unique.
    #[serde(default, deserialize_with = "unique_zones")]
    #[schemars(with = "Option<Vec<ZoneConfig>>")]
    zones: Vec<ZoneConfig>,
}

/// The front matter and body of a worker file.
struct Parts<'a> {
    /// The line of the opening `---`.
    open_line: u64,
    /// The YAML between the `---` lines; it starts on `open_line + 1`.
    yaml: &'a str,
    /// Everything after the closing `---` line.
    body: &'a str,
}

const MISSING_FRONT_MATTER: &str = "missing front matter: a worker file starts with a `---` \
     line, then YAML keys such as `name:`, then a closing `---` line, then the instructions";

const BAD_CLOSING_LINE: &str = "the front matter closes with a `---` line, or `--- |` to have \
     YAML editors read the instructions as one block of text; nothing else may follow `---`";

/// Whether `line` (without its line ending) closes the front matter: `---`, or `--- |`, which
/// the runtime reads the same way and YAML tools read as "the rest is one literal block of text"
/// (so an editor's YAML checks leave the instructions alone).
fn closes_front_matter(line: &str) -> bool {
    line == "---"
        || line
            .strip_prefix("---")
            .is_some_and(|rest| rest.trim_start() == "|")
}

/// Splits `text` (LF line endings) at its `---` lines; an error is a line and a message.
fn split_front_matter(text: &str) -> Result<Parts<'_>, (u64, String)> {
    let mut offset = 0;
    let mut opened: Option<(u64, usize)> = None;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let number = index as u64 + 1;
        let start = offset;
        offset += line.len();
        let content = line.trim_end();
        match opened {
            None if content.is_empty() => {}
            None if content == "---" => opened = Some((number, offset)),
            None => return Err((number, MISSING_FRONT_MATTER.to_owned())),
            Some((open_line, yaml_start)) if closes_front_matter(content) => {
                return Ok(Parts {
                    open_line,
                    yaml: text.get(yaml_start..start).unwrap_or(""),
                    body: text.get(offset..).unwrap_or(""),
                });
            }
            Some(_) if content.starts_with("--- ") => {
                return Err((number, BAD_CLOSING_LINE.to_owned()));
            }
            Some(_) => {}
        }
    }
    match opened {
        None => Err((1, MISSING_FRONT_MATTER.to_owned())),
        Some((open_line, _)) => Err((
            open_line,
            "the front matter is not closed: add a `---` line after its keys".to_owned(),
        )),
    }
}

/// Whether a YAML text has nothing but blank lines and comments.
fn is_blank_yaml(text: &str) -> bool {
    text.lines().all(|line| {
        let line = line.trim_start();
        line.is_empty() || line.starts_with('#')
    })
}

/// The message for a missing `name`, suggesting one from the file's name.
fn missing_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let guess = if stem == "main" {
        path.parent()
            .and_then(Path::file_name)
            .and_then(|s| s.to_str())
            .unwrap_or("")
    } else {
        stem
    };
    let guess = if is_valid_worker_name(guess) {
        Some(guess.to_owned())
    } else {
        corrected_name(guess)
    };
    match guess {
        Some(name) => format!("missing key `name` (add `name: {name}`)"),
        None => "missing key `name` (add `name: my_worker`)".to_owned(),
    }
}

fn default_max_iterations() -> u32 {
    WorkerDefinition::DEFAULT_MAX_ITERATIONS
}

fn worker_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let name = String::deserialize(deserializer)?;
    if !is_valid_worker_name(&name) {
        return Err(serde::de::Error::custom(format!(
            "must match {}",
            name_problem(&name)
        )));
    }
    Ok(name)
}

fn model_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let model = Option::<String>::deserialize(deserializer)?;
    if model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(serde::de::Error::custom(
            "must name a model as provider:model, found \"\"",
        ));
    }
    Ok(model)
}

fn model_patterns<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<String>>, D::Error> {
    let patterns = Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default();
    if patterns.is_empty() {
        return Err(serde::de::Error::custom(
            "must list at least one model pattern such as \"anthropic:*\" \
             (remove the key to allow every model)",
        ));
    }
    if patterns.iter().any(|p| p.trim().is_empty()) {
        return Err(serde::de::Error::custom(
            "must not contain an empty pattern",
        ));
    }
    Ok(Some(patterns))
}

/// A JSON Schema: an object (or `true`/`false`) that the `jsonschema` crate accepts, its
/// meta-schema included.
fn json_schema<'de, D: Deserializer<'de>>(deserializer: D) -> Result<serde_json::Value, D::Error> {
    let schema = serde_json::Value::deserialize(deserializer)?;
    match &schema {
        serde_json::Value::Object(_) | serde_json::Value::Bool(_) => {}
        serde_json::Value::Null => {
            return Err(serde::de::Error::custom(
                "must be a JSON Schema such as `{ type: object, properties: { … } }`, found nothing",
            ));
        }
        serde_json::Value::Array(_)
        | serde_json::Value::String(_)
        | serde_json::Value::Number(_) => {
            return Err(serde::de::Error::custom(format!(
                "must be a JSON Schema (a mapping of keys such as `type`), found {schema}"
            )));
        }
    }
    if let Err(error) = jsonschema::validator_for(&schema) {
        let at = error.instance_path().to_string();
        let place = if at.is_empty() {
            String::new()
        } else {
            format!(" (at `{at}`)")
        };
        return Err(serde::de::Error::custom(format!(
            "must be a valid JSON Schema: {error}{place}"
        )));
    }
    Ok(schema)
}

fn max_iterations<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let value = Option::<u32>::deserialize(deserializer)?.unwrap_or_else(default_max_iterations);
    if value == 0 {
        return Err(serde::de::Error::custom("must be at least 1, found \"0\""));
    }
    Ok(value)
}

/// Reads a list of zones (a worker's `sandbox.zones`, the program config's default `zones`),
/// failing on the first zone whose name was taken, at its line.
pub(crate) fn unique_zones<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ZoneConfig>, D::Error> {
    Ok(deserializer
        .deserialize_option(UniqueZones)?
        .unwrap_or_default())
}

/// Reads `sandbox.zones`, failing on the first zone whose name was taken (at its line).
struct UniqueZones;

impl<'de> Visitor<'de> for UniqueZones {
    type Value = Option<Vec<ZoneConfig>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut zones: Vec<ZoneConfig> = Vec::new();
        while let Some(zone) = seq.next_element_seed(NewZone(&zones))? {
            zones.push(zone);
        }
        Ok(Some(zones))
    }
}

/// One zone, refused when an earlier zone has its name.
struct NewZone<'a>(&'a [ZoneConfig]);

impl<'de> DeserializeSeed<'de> for NewZone<'_> {
    type Value = ZoneConfig;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ZoneConfig, D::Error> {
        let zone = ZoneConfig::deserialize(deserializer)?;
        if self.0.iter().any(|earlier| earlier.name == zone.name) {
            return Err(serde::de::Error::custom(format!(
                "must not reuse the zone name `{}` (zone names are unique)",
                zone.name
            )));
        }
        for earlier in self.0.iter().filter(|earlier| earlier.mode != zone.mode) {
            if let Some(overlap) = zone.overlap(earlier) {
                return Err(serde::de::Error::custom(overlap_message(
                    &zone, earlier, overlap,
                )));
            }
        }
        Ok(zone)
    }
}

/// Why `zone` cannot lie where it does relative to `earlier`, a zone of the other mode: the
/// read-only one of the two could be changed through the read-write one. (The sandbox checks
/// the real directories again when it opens them.)
fn overlap_message(zone: &ZoneConfig, earlier: &ZoneConfig, overlap: ZoneOverlap) -> String {
    let place = match overlap {
        ZoneOverlap::Same => "use the directory of",
        ZoneOverlap::Inside => "lie inside",
        ZoneOverlap::Contains => "contain",
    };
    let (ro, rw, other) = match earlier.mode {
        ZoneMode::Ro => (&earlier.name, &zone.name, "read-only"),
        ZoneMode::Rw => (&zone.name, &earlier.name, "read-write"),
    };
    format!(
        "must not {place} {other} zone `{}`: `{ro}` is read-only and could be changed through \
         `{rw}`; give the two zones the same mode, or point them at separate directories",
        earlier.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_split(text: &str, expected: Result<(u64, &str, &str), u64>) {
        let got = split_front_matter(text)
            .map(|p| (p.open_line, p.yaml, p.body))
            .map_err(|(line, _)| line);
        assert_eq!(got, expected, "{text:?}");
    }

    #[test]
    fn splits_front_matter() {
        check_split("---\nname: a\n---\nbody\n", Ok((1, "name: a\n", "body\n")));
        check_split("---\n---\n", Ok((1, "", "")));
        check_split("\n\n---  \nx: 1\n---\t\n", Ok((3, "x: 1\n", "")));
        check_split("---\nname: a\n---", Ok((1, "name: a\n", "")));
        check_split("---\na: |\n  ---x\n---\nb", Ok((1, "a: |\n  ---x\n", "b")));
        check_split("", Err(1));
        check_split("   \n", Err(1));
        check_split("name: a\n", Err(1));
        check_split("\n# title\n---\n", Err(2));
        check_split("---\nname: a\n", Err(1));
        check_split("\n---\nname: a\n", Err(2));
        // `--- |` closes it too; anything else after `---` on the closing line is an error.
        check_split(
            "---\nname: a\n--- |\n- **x**: y\n",
            Ok((1, "name: a\n", "- **x**: y\n")),
        );
        check_split(
            "---\nname: a\n---   |  \nbody",
            Ok((1, "name: a\n", "body")),
        );
        check_split("---\nname: a\n--- >\nbody", Err(3));
        check_split("---\nname: a\n--- |-\nbody", Err(3));
    }

    #[test]
    fn blank_yaml() {
        assert!(is_blank_yaml(""));
        assert!(is_blank_yaml("\n  # comment\n\n"));
        assert!(!is_blank_yaml("# c\nname: a\n"));
    }
}
