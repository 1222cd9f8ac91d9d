//! Classification of a parsed slash command: a built-in command, a manual tool invocation
//! (`/tool NAME`, `/t NAME` or `/NAME`), or an unknown command with a did-you-mean suggestion.

use std::fmt;

use golem_core::coerce::parse_bool;
use golem_core::text::closest;
use serde_json::Value;

use super::parser::ParsedCommand;

/// The commands every session understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltinCommand {
    /// `/help`: list the commands.
    Help,
    /// `/model [name]`: show or switch the model.
    Model,
    /// `/clear`: clear the conversation.
    Clear,
    /// `/compact [focus]`: summarise the conversation before its last turns.
    Compact,
    /// `/new`: start a new session.
    New,
    /// `/undo [N] [--force]`: put back the file changes of the last turn (or N turns).
    Undo,
    /// `/status`: show the worker's state.
    Status,
    /// `/tools`: list the manual tools.
    Tools,
    /// `/approvals`: show the approvals remembered this session.
    Approvals,
    /// `/mode [mode]`: show or switch how calls that need consent are decided.
    Mode,
    /// `/workers`: show the tree of running workers.
    Workers,
    /// `/exit` (also `/quit`, `/q`): end the session.
    Exit,
}

impl BuiltinCommand {
    /// Every built-in command, in the order `/help` lists them.
    pub const ALL: [BuiltinCommand; 12] = [
        BuiltinCommand::Help,
        BuiltinCommand::Model,
        BuiltinCommand::Clear,
        BuiltinCommand::Compact,
        BuiltinCommand::New,
        BuiltinCommand::Undo,
        BuiltinCommand::Status,
        BuiltinCommand::Tools,
        BuiltinCommand::Approvals,
        BuiltinCommand::Mode,
        BuiltinCommand::Workers,
        BuiltinCommand::Exit,
    ];

    /// The command's name, without the `/`.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinCommand::Help => "help",
            BuiltinCommand::Model => "model",
            BuiltinCommand::Clear => "clear",
            BuiltinCommand::Compact => "compact",
            BuiltinCommand::New => "new",
            BuiltinCommand::Undo => "undo",
            BuiltinCommand::Status => "status",
            BuiltinCommand::Tools => "tools",
            BuiltinCommand::Approvals => "approvals",
            BuiltinCommand::Mode => "mode",
            BuiltinCommand::Workers => "workers",
            BuiltinCommand::Exit => "exit",
        }
    }

    /// Other names the command answers to.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            BuiltinCommand::Exit => &["quit", "q"],
            BuiltinCommand::Help
            | BuiltinCommand::Model
            | BuiltinCommand::Clear
            | BuiltinCommand::Compact
            | BuiltinCommand::New
            | BuiltinCommand::Undo
            | BuiltinCommand::Status
            | BuiltinCommand::Tools
            | BuiltinCommand::Approvals
            | BuiltinCommand::Mode
            | BuiltinCommand::Workers => &[],
        }
    }

    /// How to call the command, as `/help` shows it.
    pub fn usage(self) -> &'static str {
        match self {
            BuiltinCommand::Model => "/model [name]",
            BuiltinCommand::Help => "/help",
            BuiltinCommand::Clear => "/clear",
            BuiltinCommand::Compact => "/compact [focus]",
            BuiltinCommand::New => "/new",
            BuiltinCommand::Undo => "/undo [N] [--force]",
            BuiltinCommand::Status => "/status",
            BuiltinCommand::Tools => "/tools",
            BuiltinCommand::Approvals => "/approvals",
            BuiltinCommand::Mode => "/mode [mode]",
            BuiltinCommand::Workers => "/workers",
            BuiltinCommand::Exit => "/exit",
        }
    }

    /// A one-line description for `/help`.
    pub fn summary(self) -> &'static str {
        match self {
            BuiltinCommand::Help => "Show available commands",
            BuiltinCommand::Model => "Show or switch the LLM model",
            BuiltinCommand::Clear => "Clear the conversation history",
            BuiltinCommand::Compact => {
                "Summarise the conversation before its last turns, to free context"
            }
            BuiltinCommand::New => "Start a new session",
            BuiltinCommand::Undo => "Put back the file changes of the last turn (or N turns)",
            BuiltinCommand::Status => "Show the worker's state",
            BuiltinCommand::Tools => "List the tools you can invoke by hand",
            BuiltinCommand::Approvals => "Show the approvals remembered for this session",
            BuiltinCommand::Mode => "The approval mode: interactive, approve_all or auto_deny",
            BuiltinCommand::Workers => "Show the running workers (also while a turn runs)",
            BuiltinCommand::Exit => "Exit the session (also /quit, /q)",
        }
    }

    /// The built-in command called `name` or one of its aliases, ignoring case.
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.to_lowercase();
        Self::ALL
            .into_iter()
            .find(|command| command.name() == name || command.aliases().contains(&name.as_str()))
    }
}

impl fmt::Display for BuiltinCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a slash command asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandKind {
    /// A built-in command; `parsed` is the command as parsed.
    Builtin {
        /// Which command.
        command: BuiltinCommand,
        /// The parsed line, unchanged.
        parsed: ParsedCommand,
    },
    /// A manual tool invocation.
    Tool {
        /// The tool's canonical name, as spelled in the tool list.
        tool_name: String,
        /// The invocation: `name` is the canonical tool name, the tool name word of the
        /// `/tool NAME` and `/t NAME` forms is removed from `args`, and so is the interactive flag
        /// from `options`.
        parsed: ParsedCommand,
        /// Whether `-i` / `--interactive` asked for the form instead of running directly.
        interactive: bool,
    },
    /// Neither a built-in nor a known tool.
    Unknown {
        /// The unknown name: the command name, or for `/tool NAME` the tool name (empty when
        /// `/tool` was given no tool name at all).
        name: String,
        /// The closest built-in or tool name, if one is close enough.
        suggestion: Option<String>,
    },
}

/// Classifies a parsed command against the built-ins and the manual tools in `tool_names`.
///
/// `/tool NAME ...` and `/t NAME ...` invoke tool `NAME`; any other `/NAME` is a built-in if one
/// matches, else a tool. Matching ignores case (an exact-case tool name is preferred). An unknown
/// name gets the closest built-in or tool name as a suggestion (only tool names for the `/tool`
/// form).
///
/// When the interactive flag is written as `-i VALUE`, the parser reads `VALUE` as its value;
/// unless it is a yes/no word, it is given back as the last positional argument.
pub fn classify_command(parsed: &ParsedCommand, tool_names: &[&str]) -> CommandKind {
    let lowered = parsed.name.to_lowercase();
    if lowered == "tool" || lowered == "t" {
        let Some(typed) = parsed.args.first() else {
            return CommandKind::Unknown {
                name: String::new(),
                suggestion: None,
            };
        };
        return match find_tool(typed, tool_names) {
            Some(tool) => tool_kind(tool, parsed, 1),
            None => CommandKind::Unknown {
                name: typed.clone(),
                suggestion: closest(typed, tool_names.iter().copied()).map(str::to_owned),
            },
        };
    }
    if let Some(command) = BuiltinCommand::from_name(&parsed.name) {
        return CommandKind::Builtin {
            command,
            parsed: parsed.clone(),
        };
    }
    if let Some(tool) = find_tool(&parsed.name, tool_names) {
        return tool_kind(tool, parsed, 0);
    }
    let builtin_names = BuiltinCommand::ALL.iter().map(|command| command.name());
    let candidates = builtin_names
        .chain(["quit", "tool"])
        .chain(tool_names.iter().copied());
    CommandKind::Unknown {
        name: parsed.name.clone(),
        suggestion: closest(&parsed.name, candidates).map(str::to_owned),
    }
}

/// The tool in `tool_names` called `typed`: exact match first, then ignoring case.
fn find_tool<'a>(typed: &str, tool_names: &[&'a str]) -> Option<&'a str> {
    tool_names
        .iter()
        .copied()
        .find(|tool| *tool == typed)
        .or_else(|| {
            let lowered = typed.to_lowercase();
            tool_names
                .iter()
                .copied()
                .find(|tool| tool.to_lowercase() == lowered)
        })
}

/// Builds [`CommandKind::Tool`], dropping `skip` leading args and the interactive flag.
fn tool_kind(tool: &str, parsed: &ParsedCommand, skip: usize) -> CommandKind {
    let mut invocation = ParsedCommand {
        name: tool.to_owned(),
        args: parsed.args.iter().skip(skip).cloned().collect(),
        options: parsed.options.clone(),
    };
    let mut interactive = false;
    for key in ["i", "interactive"] {
        match invocation.options.shift_remove(key) {
            None => {}
            Some(Value::Bool(flag)) => interactive |= flag,
            Some(Value::String(text)) => match parse_bool(&text) {
                Some(flag) => interactive |= flag,
                None => {
                    interactive = true;
                    invocation.args.push(text);
                }
            },
            Some(_) => interactive = true,
        }
    }
    CommandKind::Tool {
        tool_name: tool.to_owned(),
        parsed: invocation,
        interactive,
    }
}

#[cfg(test)]
mod tests {
    use super::super::parser::parse_command;
    use super::*;
    use serde_json::json;

    const TOOLS: &[&str] = &["git_push", "deploy", "run_tests", "Fetch"];

    fn classify(input: &str) -> CommandKind {
        match parse_command(input) {
            Ok(parsed) => classify_command(&parsed, TOOLS),
            Err(e) => panic!("{input:?}: {e}"),
        }
    }

    fn tool(input: &str) -> (String, ParsedCommand, bool) {
        match classify(input) {
            CommandKind::Tool {
                tool_name,
                parsed,
                interactive,
            } => (tool_name, parsed, interactive),
            other => panic!("{input:?} is not a tool: {other:?}"),
        }
    }

    fn unknown(input: &str) -> (String, Option<String>) {
        match classify(input) {
            CommandKind::Unknown { name, suggestion } => (name, suggestion),
            other => panic!("{input:?} is not unknown: {other:?}"),
        }
    }

    fn builtin(input: &str) -> BuiltinCommand {
        match classify(input) {
            CommandKind::Builtin { command, .. } => command,
            other => panic!("{input:?} is not a builtin: {other:?}"),
        }
    }

    #[test]
    fn tool_form_strips_tool_name() {
        let (name, parsed, interactive) = tool("/tool git_push --branch main");
        assert_eq!(name, "git_push");
        assert_eq!(parsed.name, "git_push");
        assert!(parsed.args.is_empty());
        assert_eq!(parsed.options.get("branch"), Some(&json!("main")));
        assert!(!interactive);
    }

    #[test]
    fn short_tool_form_and_extra_args() {
        let (name, parsed, _) = tool("/t deploy prod eu");
        assert_eq!(name, "deploy");
        assert_eq!(parsed.args, vec!["prod", "eu"]);
    }

    #[test]
    fn direct_tool_form_keeps_args() {
        let (name, parsed, _) = tool("/git_push main --force");
        assert_eq!(name, "git_push");
        assert_eq!(parsed.args, vec!["main"]);
        assert_eq!(parsed.options.get("force"), Some(&json!(true)));
    }

    #[test]
    fn tool_names_match_case_insensitively_and_report_canonical_name() {
        assert_eq!(tool("/TOOL GIT_PUSH").0, "git_push");
        assert_eq!(tool("/fetch").0, "Fetch");
        assert_eq!(tool("/T fetch").0, "Fetch");
    }

    #[test]
    fn exact_case_tool_is_preferred() {
        let parsed = ParsedCommand {
            name: "Go".into(),
            ..ParsedCommand::default()
        };
        let kind = classify_command(&parsed, &["go", "Go"]);
        assert!(matches!(kind, CommandKind::Tool { tool_name, .. } if tool_name == "Go"));
    }

    #[test]
    fn interactive_flag_is_detected_and_removed() {
        for input in [
            "/tool git_push -i",
            "/t git_push --interactive",
            "/git_push -i --branch x",
        ] {
            let (_, parsed, interactive) = tool(input);
            assert!(interactive, "{input}");
            assert!(
                !parsed.options.contains_key("i") && !parsed.options.contains_key("interactive")
            );
        }
        let (_, parsed, _) = tool("/git_push -i --branch x");
        assert_eq!(parsed.options.keys().collect::<Vec<_>>(), vec!["branch"]);
    }

    #[test]
    fn interactive_with_value_gives_the_word_back() {
        let (_, parsed, interactive) = tool("/tool git_push -i main");
        assert!(interactive);
        assert_eq!(parsed.args, vec!["main"]);
        let (_, parsed, interactive) = tool("/tool git_push --interactive=no");
        assert!(!interactive);
        assert!(parsed.args.is_empty() && parsed.options.is_empty());
    }

    #[test]
    fn builtins_are_not_interactive_stripped() {
        match classify("/help -i") {
            CommandKind::Builtin { command, parsed } => {
                assert_eq!(command, BuiltinCommand::Help);
                assert_eq!(parsed.options.get("i"), Some(&json!(true)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn builtins_case_insensitive_and_aliases() {
        assert_eq!(builtin("/Help"), BuiltinCommand::Help);
        assert_eq!(builtin("/MODEL gpt"), BuiltinCommand::Model);
        assert_eq!(builtin("/quit"), BuiltinCommand::Exit);
        assert_eq!(builtin("/Q"), BuiltinCommand::Exit);
        assert_eq!(builtin("/exit"), BuiltinCommand::Exit);
        assert_eq!(builtin("/Mode approve_all"), BuiltinCommand::Mode);
        for command in BuiltinCommand::ALL {
            assert_eq!(builtin(&format!("/{}", command.name())), command);
        }
    }

    #[test]
    fn builtins_win_over_same_named_tools() {
        let parsed = ParsedCommand {
            name: "status".into(),
            ..ParsedCommand::default()
        };
        let kind = classify_command(&parsed, &["status"]);
        assert!(matches!(
            kind,
            CommandKind::Builtin {
                command: BuiltinCommand::Status,
                ..
            }
        ));
        let via_tool = ParsedCommand {
            name: "tool".into(),
            args: vec!["status".into()],
            ..ParsedCommand::default()
        };
        assert!(matches!(
            classify_command(&via_tool, &["status"]),
            CommandKind::Tool { .. }
        ));
    }

    #[test]
    fn builtin_parsed_is_unchanged() {
        match classify("/model anthropic:claude --x") {
            CommandKind::Builtin { parsed, .. } => {
                assert_eq!(parsed.name, "model");
                assert_eq!(parsed.args, vec!["anthropic:claude"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_command_gets_suggestions() {
        assert_eq!(unknown("/tols"), ("tols".into(), Some("tools".into())));
        assert_eq!(unknown("/hlep"), ("hlep".into(), Some("help".into())));
        assert_eq!(
            unknown("/git_psuh"),
            ("git_psuh".into(), Some("git_push".into()))
        );
        assert_eq!(unknown("/appr"), ("appr".into(), Some("approvals".into())));
        assert_eq!(unknown("/Deplyo"), ("Deplyo".into(), Some("deploy".into())));
        assert_eq!(unknown("/quti").1, Some("quit".into()));
        assert_eq!(unknown("/tol").1, Some("tool".into()));
        assert_eq!(unknown("/w").1, Some("workers".into()));
        assert_eq!(unknown("/worker").1, Some("workers".into()));
    }

    #[test]
    fn far_names_get_no_suggestion() {
        assert_eq!(unknown("/xyzzy"), ("xyzzy".into(), None));
        assert_eq!(unknown("/v").1, None);
        assert_eq!(unknown(&format!("/{}", "z".repeat(50_000))).1, None);
    }

    #[test]
    fn tool_form_without_or_with_unknown_name() {
        assert_eq!(unknown("/tool"), (String::new(), None));
        assert_eq!(unknown("/t --branch x"), (String::new(), None));
        assert_eq!(
            unknown("/tool git_psh"),
            ("git_psh".into(), Some("git_push".into()))
        );
        assert_eq!(
            unknown("/tool help").1,
            None,
            "only tool names are suggested for /tool"
        );
    }

    #[test]
    fn no_tools_at_all() {
        let parsed = ParsedCommand {
            name: "deploy".into(),
            ..ParsedCommand::default()
        };
        assert_eq!(
            classify_command(&parsed, &[]),
            CommandKind::Unknown {
                name: "deploy".into(),
                suggestion: None
            }
        );
    }

    #[test]
    fn builtin_metadata() {
        assert_eq!(BuiltinCommand::ALL.len(), 12);
        for command in BuiltinCommand::ALL {
            assert!(!command.summary().is_empty() && !command.summary().contains('\n'));
            assert!(command.usage().starts_with(&format!("/{}", command.name())));
            assert_eq!(BuiltinCommand::from_name(command.name()), Some(command));
            assert_eq!(command.to_string(), command.name());
        }
        assert_eq!(BuiltinCommand::from_name("nope"), None);
        assert_eq!(BuiltinCommand::Exit.aliases(), &["quit", "q"]);
    }
}
