//! The `shell` toolset's approval rules (seed 004): each rule is a command pattern and a
//! decision; a command takes the decision of the first rule whose words begin it, else the
//! toolset's `default`, else it is blocked.
//!
//! Matching is by whole words, after both the pattern and the command are split with the same
//! shell-word rules: the pattern's words must equal the command's first words. So `git ` (or
//! `git`: the trailing space only separates words) matches `git status` and `git` but not
//! `gitx status`; `git status` matches `git status -s` but not `git stash`; `rm -rf` matches
//! `rm -rf /` but not `rm -r -f /` or `rm -fr /`. The program word is compared as written:
//! `/usr/bin/git status` does not match `git `, so a script called `git` in a zone is never
//! pre-approved by that rule.
//!
//! Rules are consent, not containment: a `blocked` rule stops the spellings it names and no
//! other (`rm -fr`, `find -delete` and any interpreter can still delete). What a command can
//! touch is bounded by the jail.

use golem_core::approval::{ApprovalDecisionType, ApprovalRequirement};

/// One rule: commands whose first words are `pattern`'s words take `approval`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRule {
    /// The command pattern, split into words like a command (`git `, `rm -rf`,
    /// `git commit -m 'wip'`).
    pub pattern: String,
    /// The decision for commands that match.
    pub approval: ApprovalDecisionType,
}

/// A pattern that cannot be a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
        /// The pattern.
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

    /// Which rule decides the command made of `words`.
    pub fn verdict(&self, words: &[String]) -> Verdict<'_> {
        let matched = self.rules.iter().find(|c| words.starts_with(&c.words));
        match (matched, self.default) {
            (Some(c), _) => Verdict::Rule(&c.rule),
            (None, Some(default)) => Verdict::Default(default),
            (None, None) => Verdict::NoRule,
        }
    }

    /// The approval the command made of `words` needs; a blocked one says which rule (or the
    /// lack of one) blocks it, naming the command.
    pub fn requirement(&self, words: &[String]) -> ApprovalRequirement {
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
        if self.rules.is_empty() {
            return format!("Every command {otherwise}.");
        }
        format!(
            "Rules, first match wins: {}; any other command {otherwise}.",
            self.each_rule(effect).join(", ")
        )
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
mod tests {
    use ApprovalDecisionType::{Ask, Blocked, PreApproved};

    use super::*;
    use crate::shell::words::split_command;

    fn rules(
        list: &[(&str, ApprovalDecisionType)],
        default: Option<ApprovalDecisionType>,
    ) -> ShellRules {
        let list = list
            .iter()
            .map(|(pattern, approval)| ShellRule {
                pattern: (*pattern).to_owned(),
                approval: *approval,
            })
            .collect();
        match ShellRules::new(list, default) {
            Ok(rules) => rules,
            Err(err) => panic!("{err}"),
        }
    }

    fn decide(rules: &ShellRules, command: &str) -> ApprovalRequirement {
        match split_command(command) {
            Ok(words) => rules.requirement(&words),
            Err(err) => panic!("{command:?}: {err}"),
        }
    }

    fn is_blocked(requirement: &ApprovalRequirement) -> bool {
        matches!(requirement, ApprovalRequirement::Blocked { .. })
    }

    #[test]
    fn the_cases_of_the_issue() {
        let git = rules(&[("git ", PreApproved)], None);
        assert_eq!(decide(&git, "git status"), ApprovalRequirement::PreApproved);
        assert!(is_blocked(&decide(&git, "gitx status")));

        let rm = rules(&[("rm -rf", Blocked), ("rm ", Ask)], None);
        assert!(is_blocked(&decide(&rm, "rm -rf /")));
        assert_eq!(decide(&rm, "rm file.txt"), ApprovalRequirement::Ask);

        let ask = rules(&[("git ", PreApproved)], Some(Ask));
        assert_eq!(decide(&ask, "ls -la"), ApprovalRequirement::Ask);
        assert!(is_blocked(&decide(&git, "ls -la")));
    }

    #[test]
    fn patterns_match_whole_leading_words() {
        let r = rules(
            &[
                ("git status", PreApproved),
                ("rm -rf", Blocked),
                ("rm ", Ask),
            ],
            None,
        );
        for (command, expected) in [
            ("git status", Some(PreApproved)),
            ("git status -s", Some(PreApproved)),
            ("git   status", Some(PreApproved)),
            ("'git' \"status\"", Some(PreApproved)),
            ("git stash", None),
            ("git statusx", None),
            ("git", None),
            ("rm -rf /", Some(Blocked)),
            ("rm -rf x", Some(Blocked)),
            ("rm -rf", Some(Blocked)),
            ("rm -r -f /", Some(Ask)),
            ("rm -fr /", Some(Ask)),
            ("rm file.txt", Some(Ask)),
            ("rm", Some(Ask)),
            ("rmdir x", None),
            ("/bin/rm -rf /", None),
            ("./git status", None),
        ] {
            let words = split_command(command).unwrap_or_default();
            let got = match r.verdict(&words) {
                Verdict::Rule(rule) => Some(rule.approval),
                Verdict::Default(_) | Verdict::NoRule => None,
            };
            assert_eq!(got, expected, "{command}");
        }
    }

    #[test]
    fn first_match_wins_even_when_a_later_rule_is_stricter() {
        let r = rules(&[("rm ", Ask), ("rm -rf", Blocked)], None);
        assert_eq!(decide(&r, "rm -rf /"), ApprovalRequirement::Ask);
    }

    #[test]
    fn a_trailing_space_or_quotes_in_a_pattern_are_word_syntax() {
        let r = rules(
            &[("git", PreApproved), ("git commit -m 'a b'", Blocked)],
            None,
        );
        assert_eq!(decide(&r, "git"), ApprovalRequirement::PreApproved);
        let r = rules(&[("git commit -m 'a b'", Blocked)], Some(PreApproved));
        assert!(is_blocked(&decide(&r, "git commit -m \"a b\" --amend")));
        assert_eq!(
            decide(&r, "git commit -m a b"),
            ApprovalRequirement::PreApproved
        );
    }

    #[test]
    fn defaults() {
        assert_eq!(
            decide(&rules(&[], Some(PreApproved)), "ls"),
            ApprovalRequirement::PreApproved
        );
        assert!(is_blocked(&decide(&rules(&[], Some(Blocked)), "ls")));
        assert!(is_blocked(&decide(&rules(&[], None), "ls")));
        assert!(is_blocked(&decide(&ShellRules::default(), "ls")));
    }

    #[test]
    fn bad_patterns_are_refused_when_the_rules_are_built() {
        let rule = |pattern: &str| ShellRule {
            pattern: pattern.to_owned(),
            approval: Ask,
        };
        assert_eq!(
            ShellRules::new(vec![rule("git"), rule("  ")], None),
            Err(ShellRuleError::Empty { index: 2 })
        );
        assert_eq!(
            ShellRules::new(vec![rule("# comment")], None),
            Err(ShellRuleError::Empty { index: 1 })
        );
        assert_eq!(
            ShellRules::new(vec![rule("git commit -m 'x")], None),
            Err(ShellRuleError::Unterminated {
                index: 1,
                pattern: "git commit -m 'x".into()
            })
        );
    }

    #[test]
    fn messages() {
        let r = rules(
            &[("git ", PreApproved), ("rm -rf", Blocked), ("rm ", Ask)],
            None,
        );
        let with_default = rules(&[("rm -rf", Blocked)], Some(Blocked));
        let mut out = String::new();
        for (rules, command) in [
            (&r, "rm -rf /"),
            (&r, "gitx status"),
            (&with_default, "ls"),
            (&rules(&[], None), "ls 'a b'"),
        ] {
            let reason = match decide(rules, command) {
                ApprovalRequirement::Blocked { reason } => reason,
                other => panic!("{command}: {other:?}"),
            };
            out.push_str(&format!("{command}\n  {reason}\n"));
        }
        for rules in [&r, &with_default, &rules(&[], None), &rules(&[], Some(Ask))] {
            out.push_str(&format!("policy: {}\n", rules.describe()));
            out.push_str(&format!("guide: {}\n", rules.guide()));
        }
        for err in [
            ShellRuleError::Empty { index: 2 },
            ShellRuleError::Unterminated {
                index: 1,
                pattern: "git commit -m 'x".into(),
            },
        ] {
            out.push_str(&format!("error: {err}\n"));
        }
        insta::assert_snapshot!(out);
    }
}
