//! The `shell` toolset's approval rules (docs/worker-file.md, code and shell): each rule is a
//! command pattern and a decision; a command takes the decision of the first rule whose words begin
//! it, else the toolset's `default`, else it is blocked.
//!
//! Matching is by whole words, after both the pattern and the command are split with the same
//! shell-word rules: the pattern's words must equal the command's first words. So `git ` (or
//! `git`: the trailing space only separates words) matches `git status` and `git` but not
//! `gitx status`; `git status` matches `git status -s` but not `git stash`; `rm -rf` matches
//! `rm -rf /` but not `rm -r -f /` or `rm -fr /`. The program word is compared as written:
//! `/usr/bin/git status` does not match `git `, so a script called `git` in a zone is never
//! pre-approved by that rule.
//!
//! A rule's consent reaches as far as its words. When the words of a command make the program
//! run other programs, load other configuration or write files (`git -c alias.x='!…' x`,
//! `find -exec`, `env rm …`, an interpreter; the table is `dangerous.rs`) and the rule that
//! matched (or the default) does not name those words itself, a pre-approval becomes `ask`,
//! and [`ShellRules::caution`] says why for the approval prompt. `ask` stays `ask` (with the
//! reason), `blocked` stays blocked.
//!
//! Rules are consent, not containment: a `blocked` rule stops the spellings it names and no
//! other (`rm -fr`, `find -delete` and any interpreter can still delete). What a command can
//! touch is bounded by the jail.

use golem_core::approval::{ApprovalDecisionType, ApprovalRequirement};

use super::dangerous;

/// One rule: commands whose first words are `pattern`'s words take `approval`; as written in
/// `toolsets.shell.rules`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellRule {
    /// The command pattern, split into words like a command (`git `, `rm -rf`,
    /// `git commit -m 'wip'`); not empty.
    #[serde(deserialize_with = "golem_toolset::config::non_empty_string")]
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// The decision for commands that match.
    pub approval: ApprovalDecisionType,
}

/// A pattern that cannot be a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum ShellRuleError {
    /// The pattern has no words.
    #[error("shell rule {index} has an empty pattern; a rule needs at least a program name")]
    Empty {
        /// The rule's position, from 1.
        index: usize,
    },
    /// The pattern does not split into words.
    #[error("shell rule {index} has the pattern `{pattern}` with a quote that is never closed")]
    Unterminated {
        /// The rule's position, from 1.
        index: usize,
        pattern: String,
    },
}

/// A rule with its pattern split once.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Compiled {
    rule: ShellRule,
    words: Vec<String>,
}

/// The rules of one `shell` toolset, checked when they are built.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellRules {
    rules: Vec<Compiled>,
    default: Option<ApprovalDecisionType>,
}

/// Which rule decided a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// This rule matched first.
    Rule(&'a ShellRule),
    /// No rule matched; the toolset's default applies.
    Default(ApprovalDecisionType),
    /// No rule matched and there is no default.
    NoRule,
}

impl ShellRules {
    /// Rules in the order written, and the decision for commands that match none (`None`:
    /// they are blocked). Every pattern must split into at least one word.
    pub fn new(
        rules: Vec<ShellRule>,
        default: Option<ApprovalDecisionType>,
    ) -> Result<ShellRules, ShellRuleError> {
        let rules = rules
            .into_iter()
            .enumerate()
            .map(|(i, rule)| {
                let index = i + 1;
                let words = shell_words::split(&rule.pattern).map_err(|_| {
                    ShellRuleError::Unterminated {
                        index,
                        pattern: rule.pattern.clone(),
                    }
                })?;
                if words.is_empty() {
                    return Err(ShellRuleError::Empty { index });
                }
                Ok(Compiled { rule, words })
            })
            .collect::<Result<_, _>>()?;
        Ok(ShellRules { rules, default })
    }

    /// The rules, in order.
    pub fn rules(&self) -> impl Iterator<Item = &ShellRule> {
        self.rules.iter().map(|c| &c.rule)
    }

    /// The decision for commands no rule matches.
    pub fn default_decision(&self) -> Option<ApprovalDecisionType> {
        self.default
    }

    /// The first rule whose words begin `words`.
    fn matched(&self, words: &[String]) -> Option<&Compiled> {
        self.rules.iter().find(|c| words.starts_with(&c.words))
    }

    /// Which rule decides the command made of `words`.
    pub fn verdict(&self, words: &[String]) -> Verdict<'_> {
        match (self.matched(words), self.default) {
            (Some(c), _) => Verdict::Rule(&c.rule),
            (None, Some(default)) => Verdict::Default(default),
            (None, None) => Verdict::NoRule,
        }
    }

    /// Why the command made of `words` is asked about although its rule (or the default)
    /// would let it run or ask without a reason: its words make the program run other
    /// programs, load other configuration or write files, and the rule does not name them.
    /// `None` for commands that are blocked, and for commands with nothing to say.
    pub fn caution(&self, words: &[String]) -> Option<String> {
        let (decision, covered) = match self.matched(words) {
            Some(c) => (Some(c.rule.approval), c.words.len()),
            None => (self.default, 0),
        };
        match decision? {
            ApprovalDecisionType::Blocked => None,
            ApprovalDecisionType::PreApproved | ApprovalDecisionType::Ask => {
                dangerous::uncovered(words, covered).map(|finding| finding.why)
            }
        }
    }

    /// The approval the command made of `words` needs; a blocked one says which rule (or the
    /// lack of one) blocks it, naming the command. A pre-approved command asks when
    /// [`ShellRules::caution`] has something to say.
    pub fn requirement(&self, words: &[String]) -> ApprovalRequirement {
        match self.by_rules(words) {
            ApprovalRequirement::PreApproved if self.caution(words).is_some() => {
                ApprovalRequirement::Ask
            }
            requirement => requirement,
        }
    }

    /// The requirement of the rules alone.
    fn by_rules(&self, words: &[String]) -> ApprovalRequirement {
        let command = shell_words::join(words);
        match self.verdict(words) {
            Verdict::Rule(rule) => match rule.approval {
                ApprovalDecisionType::Blocked => ApprovalRequirement::blocked(format!(
                    "the command `{command}` is blocked by the shell rule `{}`",
                    rule.pattern.trim()
                )),
                decision => decision.requirement(&command),
            },
            Verdict::Default(ApprovalDecisionType::Blocked) => {
                ApprovalRequirement::blocked(format!(
                    "the command `{command}` matches no shell rule, and commands that match none \
                     are blocked{}",
                    self.allowed_hint()
                ))
            }
            Verdict::Default(decision) => decision.requirement(&command),
            Verdict::NoRule => ApprovalRequirement::blocked(format!(
                "no shell rule allows the command `{command}`, and there is no default for \
                 commands that match none{}",
                self.allowed_hint()
            )),
        }
    }

    /// `; commands that may run start with: `git`, `ls -l`` — the patterns that are not
    /// blocked, so the model can choose a command that runs; empty when there are none.
    fn allowed_hint(&self) -> String {
        let allowed: Vec<String> = self
            .rules
            .iter()
            .filter(|c| c.rule.approval != ApprovalDecisionType::Blocked)
            .map(|c| format!("`{}`", shell_words::join(&c.words)))
            .collect();
        if allowed.is_empty() {
            String::new()
        } else {
            format!("; commands that may run start with: {}", allowed.join(", "))
        }
    }

    /// The policy in words, for listings: `by rule: `git` pre-approved, `rm -rf` blocked;
    /// otherwise ask`.
    pub fn describe(&self) -> String {
        let rules = self.each_rule(decision_name);
        let otherwise = match self.default {
            Some(decision) => decision_name(decision),
            None => "blocked",
        };
        if rules.is_empty() {
            format!("no rules; every command: {otherwise}")
        } else {
            format!("by rule: {}; otherwise {otherwise}", rules.join(", "))
        }
    }
}

impl ShellRules {
    /// The rules as a sentence for the model, so it can pick commands that will run: "Rules,
    /// first match wins: `git` runs without asking, `rm -rf` is blocked; any other command is
    /// blocked."
    pub fn guide(&self) -> String {
        let effect = |decision| match decision {
            ApprovalDecisionType::PreApproved => "runs without asking",
            ApprovalDecisionType::Ask => "asks the user first",
            ApprovalDecisionType::Blocked => "is blocked",
        };
        let otherwise = effect(self.default.unwrap_or(ApprovalDecisionType::Blocked));
        let rules = if self.rules.is_empty() {
            format!("Every command {otherwise}.")
        } else {
            format!(
                "Rules, first match wins: {}; any other command {otherwise}.",
                self.each_rule(effect).join(", ")
            )
        };
        let pre_approves = self.default == Some(ApprovalDecisionType::PreApproved)
            || self
                .rules
                .iter()
                .any(|c| c.rule.approval == ApprovalDecisionType::PreApproved);
        if pre_approves {
            format!(
                "{rules} A command whose words make a program run other programs, load other \
                 configuration or write files (`git -c …`, `find -exec`, `env …`, `bash -c`, a \
                 script) asks the user first unless a rule names those words."
            )
        } else {
            rules
        }
    }

    /// Each rule as `` `words` `` and its decision in the words of `decision`.
    fn each_rule(&self, decision: impl Fn(ApprovalDecisionType) -> &'static str) -> Vec<String> {
        self.rules
            .iter()
            .map(|c| {
                format!(
                    "`{}` {}",
                    shell_words::join(&c.words),
                    decision(c.rule.approval)
                )
            })
            .collect()
    }
}

fn decision_name(decision: ApprovalDecisionType) -> &'static str {
    match decision {
        ApprovalDecisionType::PreApproved => "pre-approved",
        ApprovalDecisionType::Ask => "ask",
        ApprovalDecisionType::Blocked => "blocked",
    }
}

#[cfg(test)]
mod tests;
