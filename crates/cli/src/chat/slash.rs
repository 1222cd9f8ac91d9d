//! The chat's slash commands: `/help`, `/model [name]`, `/clear`, `/compact [focus]`, `/new`,
//! `/undo [N] [--force]`, `/status`, `/tools`, `/tool NAME …` (also `/t NAME …` and `/NAME …`,
//! with `-i` for a form), `/approvals [forget N | clear]` (the session's approvals and the
//! project's rules), `/mode [mode]` (the session's approval mode, `setApprovalMode`) and
//! `/exit`. Parsing and classification are `super::command`, typing a tool's options
//! `golem_core::coerce`; this module carries them out.

use std::collections::BTreeMap;

use clap::ValueEnum;
use golem_core::coerce::{missing_required, options_to_args};
use golem_core::text::thousands;
use golem_protocol::{
    ActionEvent, ApprovalMode, ApprovalScope, DisplayEvent, ExecutionMode, TokenUsage,
};
use serde_json::Value;

use super::Chat;
use super::command::{BuiltinCommand, CommandKind, ParsedCommand, classify_command, parse_command};
use super::complete::ToolEntry;
use super::form;
use crate::commands::common::ApprovalArg;

/// What the chat does after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next line.
    Continue,
    /// End the session.
    Exit,
}

/// The tools the user may run (`manual` or `both`), for `/tools`, completion and `/NAME`.
pub fn manual_tools(chat: &Chat) -> Vec<ToolEntry> {
    chat.registry()
        .all()
        .filter(|tool| tool.execution().mode != ExecutionMode::Llm)
        .map(|tool| {
            let execution = tool.execution();
            let options = tool
                .input_schema()
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            ToolEntry {
                name: tool.name().to_owned(),
                description: execution
                    .label
                    .unwrap_or_else(|| tool.description().to_owned()),
                options,
            }
        })
        .collect()
}

/// Runs the command line `line` (which starts with `/`).
pub fn handle(chat: &mut Chat, line: &str) -> Flow {
    let parsed = match parse_command(line) {
        Ok(parsed) => parsed,
        Err(e) => {
            chat.error(&e.to_string());
            return Flow::Continue;
        }
    };
    let tools = manual_tools(chat);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    match classify_command(&parsed, &names) {
        CommandKind::Builtin { command, parsed } => builtin(chat, command, &parsed),
        CommandKind::Tool {
            tool_name,
            parsed,
            interactive,
        } => {
            run_tool(chat, &tool_name, &parsed, interactive);
            Flow::Continue
        }
        CommandKind::Unknown { name, suggestion } => {
            let shown = if name.is_empty() {
                "/tool needs a tool name (see /tools)".to_owned()
            } else if matches!(parsed.name.to_lowercase().as_str(), "tool" | "t") {
                format!("unknown tool {name}")
            } else {
                format!("unknown command /{name}")
            };
            let hint = match suggestion {
                Some(s) => format!(" (did you mean /{s}?)"),
                None => " (type /help for the commands)".to_owned(),
            };
            chat.error(&format!("{shown}{hint}"));
            Flow::Continue
        }
    }
}

/// What `/help` shows (between turns, and typed while a turn runs): every command and the keys.
pub(super) fn help_text() -> String {
    let mut text = String::from("Commands:\n");
    for command in BuiltinCommand::ALL {
        text.push_str(&format!(
            "  {:<22} {}\n",
            command.usage(),
            command.summary()
        ));
    }
    text.push_str(&format!(
        "  {:<22} {}\n  {:<22} {}\n",
        "/tool NAME [--opt v]",
        "run a manual tool (also /t NAME, /NAME)",
        "/tool NAME -i",
        "fill in the tool's arguments one by one"
    ));
    text.push_str(
        "Keys: Tab completes; Ctrl+C or Esc interrupts a turn; Ctrl+D (or Ctrl+C twice) exits.",
    );
    text
}

/// The tokens of `usage` as the status line and `/status` show them: `1 in · 48 out`, then the
/// cache's reads and writes when there were any (`· 1,870 cache write`), every count grouped.
pub(super) fn token_counts(usage: &TokenUsage) -> String {
    let mut text = format!(
        "{} in · {} out",
        thousands(usage.input_tokens),
        thousands(usage.output_tokens)
    );
    for (tokens, what) in [
        (usage.cache_read_tokens, "cache read"),
        (usage.cache_write_tokens, "cache write"),
    ] {
        if tokens > 0 {
            text.push_str(&format!(" · {} {what}", thousands(tokens)));
        }
    }
    text
}

fn builtin(chat: &mut Chat, command: BuiltinCommand, parsed: &ParsedCommand) -> Flow {
    match command {
        BuiltinCommand::Help => chat.say(&help_text()),
        BuiltinCommand::Model => match parsed.args.first() {
            None => match chat.status() {
                Some(status) => chat.say(&format!("model: {}", status.model)),
                None => chat.error("the session is over"),
            },
            Some(name) => chat.act(ActionEvent::SetModel {
                request_id: None,
                model: name.clone(),
            }),
        },
        BuiltinCommand::Clear => chat.act(ActionEvent::ClearHistory { request_id: None }),
        BuiltinCommand::Compact => compact(chat, parsed),
        BuiltinCommand::New => chat.act(ActionEvent::NewSession { request_id: None }),
        BuiltinCommand::Undo => undo(chat, parsed),
        BuiltinCommand::Status => status(chat),
        BuiltinCommand::Tools => list_tools(chat),
        BuiltinCommand::Approvals => approvals(chat, parsed),
        BuiltinCommand::Mode => mode(chat, parsed),
        BuiltinCommand::Workers => chat.show_workers(),
        BuiltinCommand::Exit => return Flow::Exit,
    }
    Flow::Continue
}

/// `/undo [N] [--force]`: the `undo` action; a conflict's message says how to force it.
fn undo(chat: &mut Chat, parsed: &ParsedCommand) {
    let force = parsed.options.get("force") == Some(&serde_json::Value::Bool(true));
    let unknown: Vec<&String> = parsed.options.keys().filter(|k| *k != "force").collect();
    let turns = match parsed.args.as_slice() {
        [] => None,
        [n] => match n.parse::<u32>() {
            Ok(n) if n >= 1 => Some(n),
            Ok(_) | Err(_) => {
                return chat.error("usage: /undo [N] [--force] (N: how many turns, 1 or more)");
            }
        },
        _ => return chat.error("usage: /undo [N] [--force]"),
    };
    if !unknown.is_empty() {
        return chat.error("usage: /undo [N] [--force]");
    }
    chat.act(ActionEvent::Undo {
        request_id: None,
        turns,
        force,
    });
}

/// `/mode [mode]`: the session's approval mode, or `setApprovalMode`. `defer` is refused: it
/// parks a call in the approval inbox and ends the turn waiting there, and the chat has no way
/// to continue such a turn.
fn mode(chat: &mut Chat, parsed: &ParsedCommand) {
    const USAGE: &str = "usage: /mode [interactive | approve_all | auto_deny]";
    if !parsed.options.is_empty() {
        return chat.error(USAGE);
    }
    let name = match parsed.args.as_slice() {
        [] => {
            return match chat.status() {
                Some(status) => match status.approval_mode {
                    Some(mode) => chat.say(&format!("approval mode: {mode}")),
                    None => chat.error("the session does not say its approval mode"),
                },
                None => chat.error("the session is over"),
            };
        }
        [name] => name,
        _ => return chat.error(USAGE),
    };
    let Ok(arg) = ApprovalArg::from_str(name, true) else {
        return chat.error(&format!(
            "unknown approval mode {name}: the modes are interactive, approve_all, auto_deny \
             and defer"
        ));
    };
    match ApprovalMode::from(arg) {
        ApprovalMode::Defer => chat.error(
            "defer does not work in a chat: it parks calls in the approval inbox for someone to \
             answer later, and a chat cannot continue a turn left waiting there (use interactive \
             to be asked here, or `golem-forge run --approval defer`)",
        ),
        mode @ (ApprovalMode::Interactive | ApprovalMode::ApproveAll | ApprovalMode::AutoDeny) => {
            chat.act(ActionEvent::SetApprovalMode {
                request_id: None,
                mode,
            })
        }
    }
}

/// `/compact [focus]`: the `compact` action; the words after it are what the summary keeps
/// in focus.
fn compact(chat: &mut Chat, parsed: &ParsedCommand) {
    if !parsed.options.is_empty() {
        return chat
            .error("usage: /compact [focus] (the words after it are what to keep in focus)");
    }
    let focus = parsed.args.join(" ");
    chat.act(ActionEvent::Compact {
        request_id: None,
        focus: (!focus.trim().is_empty()).then_some(focus),
    });
}

fn status(chat: &mut Chat) {
    let Some(status) = chat.status() else {
        chat.error("the session is over");
        return;
    };
    let zones: Vec<String> = status
        .zones
        .iter()
        .map(|z| format!("/{} ({})", z.name, z.mode))
        .collect();
    let text = format!(
        "worker: {} (depth 0)\nmodel: {}\nzones: {}\ntokens: {}{}\nconversation: {} messages{}\napprovals remembered: {}\nsession: {}",
        status.worker,
        status.model,
        if zones.is_empty() {
            "none".to_owned()
        } else {
            zones.join(", ")
        },
        token_counts(&status.usage),
        status
            .cost
            .map(|cost| format!(" · {}", crate::frontend::render::human_cost(cost)))
            .unwrap_or_default(),
        status.messages,
        status
            .context
            .map(|fill| format!(
                "\ncontext: {} % of {} tokens",
                fill.percent(),
                crate::frontend::render::human_count(fill.window)
            ))
            .unwrap_or_default(),
        status.approvals_remembered,
        status.session_id,
    );
    let budget = status.budget.map(|budget| {
        use crate::frontend::workers::{budget_amounts, budget_left};
        format!(
            "\nbudget per turn: {} ({})",
            budget_amounts(&budget.limits).unwrap_or_default(),
            budget_left(&budget.remaining).unwrap_or_default()
        )
    });
    chat.say(&format!("{text}{}", budget.unwrap_or_default()));
}

fn list_tools(chat: &mut Chat) {
    chat.send(ActionEvent::ListManualTools { request_id: None });
    let tools = chat
        .wait(|event| match event {
            DisplayEvent::ManualToolsAvailable { tools, .. } => Some(tools),
            _ => None,
        })
        .unwrap_or_default();
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for tool in tools {
        let category = tool.category.unwrap_or_else(|| "Other".to_owned());
        // A tool without a label of its own is labelled with its name: shown once.
        let label = if tool.label == tool.name {
            ""
        } else {
            &tool.label
        };
        groups
            .entry(category)
            .or_default()
            .push(format!("  /{:<14} {label}", tool.name));
    }
    if groups.is_empty() {
        chat.say("no tools for manual use");
        return;
    }
    let mut text = String::new();
    for (category, tools) in groups {
        text.push_str(&format!("{category}\n{}\n", tools.join("\n")));
    }
    text.push_str("Run one with /NAME --option value, or /NAME -i for a form.");
    chat.say(&text);
}

fn approvals(chat: &mut Chat, parsed: &ParsedCommand) {
    match parsed
        .args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {
            chat.send(ActionEvent::ListApprovals { request_id: None });
            let approvals = chat
                .wait(|event| match event {
                    DisplayEvent::ApprovalsRemembered { approvals, .. } => Some(approvals),
                    _ => None,
                })
                .unwrap_or_default();
            if approvals.is_empty() {
                chat.say("no approvals remembered this session, and no project rules");
                return;
            }
            let mut text = String::new();
            for (scope, heading) in [
                (ApprovalScope::Session, "Remembered for this session:\n"),
                (
                    ApprovalScope::Project,
                    "Project rules (.golem-forge/approvals.yaml):\n",
                ),
            ] {
                let mut listed = approvals.iter().filter(|a| a.scope == scope).peekable();
                if listed.peek().is_some() {
                    text.push_str(heading);
                }
                for approval in listed {
                    text.push_str(&format!(
                        "  {}. {} {}\n",
                        approval.index,
                        approval.tool_name,
                        golem_core::text::fold(&approval.args.to_string(), 80)
                    ));
                }
            }
            text.push_str(
                "Forget one with /approvals forget N (a project rule leaves the file), \
                 the session's with /approvals clear.",
            );
            chat.say(&text);
        }
        ["clear"] => chat.act(ActionEvent::ForgetApprovals {
            request_id: None,
            index: None,
        }),
        ["forget", n] => match n.parse::<u32>() {
            Ok(index) => chat.act(ActionEvent::ForgetApprovals {
                request_id: None,
                index: Some(index),
            }),
            Err(_) => chat.error(&format!("no remembered approval number {n}")),
        },
        _ => chat.error("usage: /approvals [forget N | clear]"),
    }
}

fn run_tool(chat: &mut Chat, name: &str, parsed: &ParsedCommand, interactive: bool) {
    let Some(schema) = chat
        .registry()
        .get(name)
        .map(|tool| tool.input_schema().clone())
    else {
        chat.error(&format!("unknown tool {name}"));
        return;
    };
    let args = if interactive {
        let mut print = |text: &str| chat.say(text);
        match form::fill(&schema, &mut print) {
            Some(args) => args,
            None => {
                chat.say("cancelled");
                return;
            }
        }
    } else {
        match options_to_args(&parsed.args, &parsed.options, &schema) {
            Ok(args) => args,
            Err(e) => {
                chat.error(&e.to_string());
                return;
            }
        }
    };
    let missing = missing_required(&args, &schema);
    if !missing.is_empty() {
        let options: Vec<String> = missing.iter().map(|m| format!("--{m}")).collect();
        chat.error(&format!(
            "{name} needs {} (or run /{name} -i)",
            options.join(", ")
        ));
        return;
    }
    chat.invoke(name, Value::Object(args));
}
