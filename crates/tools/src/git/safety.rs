//! What keeps git from running programs that the repository's configuration names, and from
//! reading the user's or the system's configuration: the environment of every run and the
//! `-c` settings at the front of every command line (command-line settings win over every
//! configuration file, so each key below is neutral whatever `.git/config` says).
//!
//! Covered, by a fixed `-c` (and, where git reads an environment variable first, by that too):
//! `core.hooksPath=/dev/null` unless the toolset sets `hooks: true` (no hook runs: `pre-commit`,
//! `post-commit`, `post-checkout`, `pre-push`, …); `core.fsmonitor=false`;
//! `core.sshCommand=ssh` (`GIT_SSH_COMMAND`); `core.pager=cat` (with `--no-pager`, `GIT_PAGER`);
//! `core.editor` and `sequence.editor` set to `:`, git's "no editor" (`GIT_EDITOR`,
//! `GIT_SEQUENCE_EDITOR`); `core.askPass` empty (`GIT_ASKPASS`, `SSH_ASKPASS` empty,
//! `GIT_TERMINAL_PROMPT=0`); `credential.helper` empty, which empties the list of helpers;
//! `gpg.program`, `gpg.{openpgp,x509,ssh}.program` and `gpg.ssh.defaultKeyCommand` empty, with
//! signing (`commit.gpgSign`, `tag.gpgSign`, `push.gpgSign`) and `log.showSignature` off;
//! submodules
//! never recursed into (`submodule.recurse`, `fetch.recurseSubmodules`,
//! `push.recurseSubmodules`, `status.submoduleSummary`, `diff.submodule=short`); no automatic
//! `gc` or maintenance; `branch.autoSetupMerge=false`, so a switch to a remote branch never
//! writes the repository's configuration. `core.gitProxy` is overridden by `GIT_PROXY_COMMAND` set empty, and the
//! transports by `GIT_ALLOW_PROTOCOL` (file, git, http, https, ssh: never `ext::`, `fd::` or a
//! remote helper named by the repository), which beats any `protocol.*.allow`.
//!
//! Covered by name, from the keys the repository's configuration sets (`driver_override`):
//! `filter.<driver>.{clean,smudge,process}` (empty: no filter runs; `required` false),
//! `merge.<driver>.driver` (empty: the merge stops at a conflict instead),
//! `credential.<url>.helper`, `gpg.<format>.program`, `hook.<name>.command`,
//! `trailer.<token>.{cmd,command}` and `core.alternateRefsCommand`.
//!
//! Covered by flags instead: `diff.external` and `diff.<driver>.{command,textconv}` (an empty
//! value makes git fail trying to run "", so every command that shows a diff passes
//! `--no-ext-diff --no-textconv`); `pager.<command>` (`--no-pager`);
//! `remote.<name>.uploadpack` and `.receivepack`, where git keeps the *first* value it reads
//! (the repository's, before any `-c`), so `git_pull` passes `--upload-pack` and `git_push`
//! `--receive-pack` with git's own programs. `core.worktree` is beaten
//! by `GIT_DIR` and `GIT_WORK_TREE`, which pin the repository to the zone's root. Aliases
//! never matter: the tools run git's own commands only.

use std::collections::BTreeMap;

use golem_protocol::{ToolError, ToolErrorCode};

use super::GitAuthor;

/// The identity of commits when neither the toolset nor the repository names one.
pub const DEFAULT_AUTHOR: (&str, &str) = ("Golem Forge", "golem-forge@localhost");

/// The transports git may use: never `ext::`, `fd::` or a remote helper the repository names.
const ALLOWED_PROTOCOLS: &str = "file:git:http:https:ssh";

/// `-c` settings on every command line (see the module's header for why each is there).
const ALWAYS: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.sshCommand", "ssh"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("status.submoduleSummary", "false"),
    ("diff.submodule", "short"),
    // The tools never write the repository's configuration (a protected file): a branch made
    // from a remote one records no upstream.
    ("branch.autoSetupMerge", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    // The repository belongs to the user who named it as a zone; inside the jail its files
    // belong to another id, which git would otherwise refuse as "dubious ownership".
    ("safe.directory", "*"),
    // Output the tools read: no colour, raw UTF-8 paths, `a/` and `b/` prefixes.
    ("color.ui", "false"),
    ("core.quotePath", "false"),
    ("diff.noprefix", "false"),
    ("diff.mnemonicPrefix", "false"),
    ("diff.relative", "false"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("advice.detachedHead", "false"),
];

/// The value that neutralizes `key`, a key the repository's configuration sets, when it names
/// a program (keys come as `git config --name-only` prints them: section and variable in lower
/// case, the subsection as written).
fn driver_override(key: &str) -> Option<&'static str> {
    if key.eq_ignore_ascii_case("core.alternateRefsCommand") {
        return Some("");
    }
    let (section, rest) = key.split_once('.')?;
    let (_subsection, variable) = rest.rsplit_once('.')?;
    let section = section.to_ascii_lowercase();
    let variable = variable.to_ascii_lowercase();
    match (section.as_str(), variable.as_str()) {
        ("filter", "clean" | "smudge" | "process")
        | ("merge", "driver")
        | ("credential", "helper")
        | ("gpg", "program")
        | ("hook", "command")
        | ("trailer", "cmd" | "command") => Some(""),
        ("filter", "required") => Some("false"),
        _ => None,
    }
}

/// The words at the front of a git command line: the fixed settings, `core.hooksPath` unless
/// `hooks`, the identity of commits (the toolset's `author`, else the repository's own, else
/// [`DEFAULT_AUTHOR`]) and an override for each key of `repository_keys` that names a program.
/// A key that cannot be written as `-c key=value` (it holds `=`) is an error: git is not run.
pub(super) fn config_args(
    hooks: bool,
    author: Option<&GitAuthor>,
    repository_keys: &[String],
) -> Result<Vec<String>, ToolError> {
    let mut settings: Vec<(String, String)> = ALWAYS
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    if !hooks {
        settings.push(("core.hooksPath".into(), "/dev/null".into()));
    }
    let sets = |name: &str| repository_keys.iter().any(|key| key == name);
    match author {
        Some(author) => {
            settings.push(("user.name".into(), author.name.clone()));
            settings.push(("user.email".into(), author.email.clone()));
        }
        None => {
            if !sets("user.name") {
                settings.push(("user.name".into(), DEFAULT_AUTHOR.0.into()));
            }
            if !sets("user.email") {
                settings.push(("user.email".into(), DEFAULT_AUTHOR.1.into()));
            }
        }
    }
    for key in repository_keys {
        let Some(value) = driver_override(key) else {
            continue;
        };
        if key.contains('=') {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "the repository's configuration sets `{}`, which names a program and cannot \
                     be overridden on git's command line (the name holds `=`); git was not run",
                    key.escape_debug()
                ),
            ));
        }
        settings.push((key.clone(), value.to_owned()));
    }
    let mut words = Vec::with_capacity(settings.len() * 2);
    for (key, value) in settings {
        words.push("-c".to_owned());
        words.push(format!("{key}={value}"));
    }
    Ok(words)
}

/// The environment of every git run in the repository at the root of `zone` (added to the
/// jail's own: `PATH`, a private `HOME` and `TMPDIR`, …): no system or user configuration, the
/// repository pinned to the zone, no prompts, editors, pagers or proxies, the transports of
/// [`ALLOWED_PROTOCOLS`]; `read_only` runs take no optional locks.
pub(super) fn environment(zone: &str, read_only: bool) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = [
        ("GIT_DIR", format!("/{zone}/.git")),
        ("GIT_WORK_TREE", format!("/{zone}")),
        ("GIT_CONFIG_NOSYSTEM", "1".into()),
        ("GIT_CONFIG_GLOBAL", "/dev/null".into()),
        ("GIT_ATTR_NOSYSTEM", "1".into()),
        ("GIT_TERMINAL_PROMPT", "0".into()),
        ("GIT_ASKPASS", String::new()),
        ("SSH_ASKPASS", String::new()),
        ("GIT_EDITOR", ":".into()),
        ("GIT_SEQUENCE_EDITOR", ":".into()),
        ("GIT_MERGE_AUTOEDIT", "no".into()),
        ("GIT_PAGER", "cat".into()),
        ("PAGER", "cat".into()),
        ("GIT_SSH_COMMAND", "ssh".into()),
        ("GIT_PROXY_COMMAND", String::new()),
        ("GIT_ALLOW_PROTOCOL", ALLOWED_PROTOCOLS.into()),
        ("GIT_PROTOCOL_FROM_USER", "0".into()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect();
    if read_only {
        env.insert("GIT_OPTIONAL_LOCKS".into(), "0".into());
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    /// The `-c` values, as `key=value` strings.
    fn settings(words: &[String]) -> Vec<&str> {
        words
            .chunks(2)
            .map(|pair| {
                assert_eq!(pair[0], "-c");
                pair[1].as_str()
            })
            .collect()
    }

    #[test]
    fn hooks_and_programs_are_off_and_an_identity_is_given() {
        let words = config_args(false, None, &[]).unwrap_or_else(|e| panic!("{e:?}"));
        let set = settings(&words);
        for expected in [
            "core.hooksPath=/dev/null",
            "core.fsmonitor=false",
            "core.sshCommand=ssh",
            "core.pager=cat",
            "core.editor=:",
            "credential.helper=",
            "gpg.program=",
            "user.name=Golem Forge",
            "user.email=golem-forge@localhost",
        ] {
            assert!(set.contains(&expected), "{expected} missing from {set:?}");
        }
        let with_hooks = config_args(true, None, &[]).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(
            !settings(&with_hooks)
                .iter()
                .any(|s| s.contains("hooksPath"))
        );
    }

    #[test]
    fn the_identity_is_the_toolsets_else_the_repositorys_else_ours() {
        let own = keys(&["user.name", "user.email"]);
        let words = config_args(false, None, &own).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!settings(&words).iter().any(|s| s.starts_with("user.")));
        let author = GitAuthor {
            name: "Ada".into(),
            email: "ada@example.org".into(),
        };
        let words = config_args(false, Some(&author), &own).unwrap_or_else(|e| panic!("{e:?}"));
        let set = settings(&words);
        assert!(set.contains(&"user.name=Ada") && set.contains(&"user.email=ada@example.org"));
    }

    #[test]
    fn drivers_the_repository_names_are_overridden_by_name() {
        let repo = keys(&[
            "core.bare",
            "filter.Evil.clean",
            "filter.lfs.smudge",
            "filter.lfs.process",
            "filter.lfs.required",
            "merge.ours.driver",
            "credential.https://example.com.helper",
            "gpg.ssh.program",
            "hook.lint.command",
            "trailer.sign.cmd",
            "core.alternaterefscommand",
            "diff.evil.textconv",
            "user.name",
        ]);
        let words = config_args(false, None, &repo).unwrap_or_else(|e| panic!("{e:?}"));
        let set = settings(&words);
        for expected in [
            "filter.Evil.clean=",
            "filter.lfs.smudge=",
            "filter.lfs.process=",
            "filter.lfs.required=false",
            "merge.ours.driver=",
            "credential.https://example.com.helper=",
            "gpg.ssh.program=",
            "hook.lint.command=",
            "trailer.sign.cmd=",
            "core.alternaterefscommand=",
        ] {
            assert!(set.contains(&expected), "{expected} missing from {set:?}");
        }
        assert!(!set.iter().any(|s| s.starts_with("core.bare")));
        // Covered by `--no-textconv` on every diff instead: an empty value would fail.
        assert!(!set.iter().any(|s| s.starts_with("diff.evil")));
    }

    #[test]
    fn a_key_that_cannot_be_written_on_the_command_line_stops_the_run() {
        let err = config_args(false, None, &keys(&["filter.a=b.clean"]))
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(err.message.contains("filter.a=b.clean"), "{}", err.message);
        // A key git would not run anything for is not overridden, whatever its name.
        assert!(config_args(false, None, &keys(&["alias.a=b"])).is_ok());
    }

    #[test]
    fn the_environment_pins_the_repository_and_reads_no_user_configuration() {
        let env = environment("repo", true);
        assert_eq!(env["GIT_DIR"], "/repo/.git");
        assert_eq!(env["GIT_WORK_TREE"], "/repo");
        assert_eq!(env["GIT_CONFIG_NOSYSTEM"], "1");
        assert_eq!(env["GIT_CONFIG_GLOBAL"], "/dev/null");
        assert_eq!(env["GIT_TERMINAL_PROMPT"], "0");
        assert_eq!(env["GIT_OPTIONAL_LOCKS"], "0");
        assert!(!environment("repo", false).contains_key("GIT_OPTIONAL_LOCKS"));
    }
}
