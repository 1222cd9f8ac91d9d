//! The rules' decisions: whole-word matching, first match wins, defaults, and the table of
//! programs that run others turning a pre-approval into a question.

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
        ("git -c core.fsmonitor=id status", None),
        ("git --no-pager status", None),
    ] {
        let words = split_command(command).unwrap_or_default();
        let got = match r.verdict(&words) {
            Verdict::Rule(rule) => Some(rule.approval),
            Verdict::Default(_) | Verdict::NoRule => None,
        };
        assert_eq!(got, expected, "{command}");
    }
}

/// Commands whose words make the program run other programs, load other configuration or
/// write files: each asks although a rule (or the default) pre-approves it.
const RUN_OTHERS: &[&str] = &[
    // git: configuration on the command line, other helper programs, config writes.
    "git -c alias.x='!rm -f /work/victim.txt; true' x",
    "git -c core.sshCommand='touch /work/pwned' fetch origin",
    "git -calias.x=!id x",
    "git --config-env=core.pager=EDITOR log",
    "git --config-env core.pager=EDITOR log",
    "git --no-pager -c core.pager=id log",
    "git -C sub --no-pager -c core.fsmonitor=id status",
    "git --exec-path=/work/bin status",
    "git fetch --upload-pack='touch /work/x' origin",
    "git fetch --upload-pack 'touch /work/x' origin",
    "git pull --upload-pack=x origin",
    "git clone -u 'touch /work/x' host:repo",
    "git clone -qu/work/x host:repo",
    "git clone --upload-pack=x host:repo",
    "git ls-remote -u x origin",
    "git push --receive-pack=x origin",
    "git push --exec=x origin",
    "git clone -c core.sshCommand=x host:repo dir",
    "git clone --config core.sshCommand=x host:repo dir",
    "git clone --template=/work/hooks host:repo",
    "git clone 'ext::sh -c touch% /work/x' dir",
    "git diff --ext-diff",
    "git diff --ext-d",
    "git fetch --upload-pac=x origin",
    "git log -p --textc",
    "git log -p --textconv",
    "git show --textconv HEAD:a.pdf",
    "git config alias.x '!rm -rf /work'",
    "git config --global core.pager id",
    "git config --add credential.helper x",
    "git config set core.sshCommand x",
    "git config user.name",
    "git submodule foreach 'rm -rf /work'",
    "git rebase --exec 'rm x' HEAD~1",
    "git rebase -x 'rm x' HEAD~1",
    "git bisect run ./evil.sh",
    "git difftool HEAD~1",
    "git mergetool",
    "git filter-branch --tree-filter 'rm x' HEAD",
    "git grep -O'rm -rf' x",
    "git grep --open-files-in-pager=id x",
    "git archive --remote=origin --exec=id HEAD",
    "/usr/bin/git -c alias.x=!id x",
    "./git -c alias.x=!id x",
    // A program outside the system directories, and git aliases.
    "./git status",
    "/work/git status",
    "/usr/bin/../../work/git status",
    "/tmp/build.sh",
    "bin/tool",
    "git st",
    "git --no-pager lg",
    // find: running, deleting, writing.
    "find . -exec rm {} \\;",
    "find . -execdir rm {} +",
    "find . -ok rm {} \\;",
    "find . -okdir rm {} \\;",
    "find . -name '*.tmp' -delete",
    "find . -fprint /work/out",
    "find . -fprint0 /work/out",
    "find . -fprintf /work/out %p",
    "find . -fls /work/out",
    // Prefixes that run the command in their arguments.
    "env rm -rf /work",
    "env -i GIT_SSH_COMMAND=id git fetch",
    "/usr/bin/env rm x",
    "xargs rm",
    "sudo ls",
    "doas ls",
    "nice rm x",
    "ionice -c3 rm x",
    "timeout 5 rm x",
    "nohup rm x",
    "stdbuf -o0 rm x",
    "setsid rm x",
    "chroot / rm x",
    "flock /tmp/lock rm x",
    "watch ls",
    "time rm x",
    "command rm x",
    "exec rm x",
    "builtin echo x",
    "strace ls",
    "ltrace ls",
    "taskset 1 ls",
    "unshare ls",
    "nsenter ls",
    "busybox sh",
    "script -c 'rm x'",
    "script",
    // Interpreters: inline code, a module, a script.
    "bash -c 'rm x'",
    "sh -c 'rm x'",
    "zsh -c x",
    "dash -c x",
    "ksh -c x",
    "bash -xc x",
    "bash script.sh",
    "python -c x",
    "python3 -c x",
    "python3 -Sc x",
    "python3 -m http.server",
    "python3.12 -c x",
    "python3 evil.py",
    "perl -e x",
    "perl -E x",
    "perl -ne x",
    "ruby -e x",
    "node -e x",
    "node -p x",
    "node --eval=x",
    "php -r x",
    "lua -e x",
    "Rscript -e x",
    // awk and sed programs that run commands or write files.
    "awk 'BEGIN { system(\"rm x\") }'",
    "awk '{ print | \"sh\" }' f",
    "awk 'BEGIN { \"id\" | getline x }'",
    "gawk -f prog.awk f",
    "mawk 'BEGIN{system(\"x\")}'",
    "awk -F: 'BEGIN{system(\"x\")}' f",
    "sed 's/x/rm y/e' f",
    "sed '1e id' f",
    "sed -e p -e '1e id' f",
    "sed -i s/a/b/ f",
    "sed -ni p f",
    "sed -ie s/a/b/ f",
    "sed --in-place s/a/b/ f",
    "sed -f script.sed f",
    "sed 'w /work/out' f",
    "sed -n 's/a/b/w out' f",
    // Archivers, copiers, remote shells.
    "tar -xf a.tar --to-command='sh -c x'",
    "tar --checkpoint=1 --checkpoint-action=exec=x -cf a.tar .",
    "tar -I 'sh -c x' -xf a.tar",
    "tar --use-compress-program=x -xf a.tar",
    "tar --rsh-command=x -xf host:a.tar",
    "tar xIf x a.tar",
    "rsync -e 'sh -c x' a host:b",
    "rsync --rsh=x a host:b",
    "rsync --rsync-path=x a host:b",
    "rsync -avze x a host:b",
    "ssh -o ProxyCommand='id' host",
    "ssh -oProxyCommand=id host",
    "ssh -o 'LocalCommand id' -o PermitLocalCommand=yes host",
    "ssh -F /work/ssh_config host",
    "scp -o ProxyCommand=id a host:b",
    // Programs that run a project's own code, or can start a shell.
    "make",
    "make test",
    "cmake -P x.cmake",
    "npm run build",
    "npx cowsay",
    "cargo run",
    "less f",
    "more f",
    "man ls",
    "vi f",
    "vim f",
    "emacs f",
    // Options of everyday programs that run another program.
    "sort --compress-program=id f",
    "sort --compress-prog=id f",
    "tar --to-comm=x -xf a.tar",
    "rg --pre id pattern",
    "fd -x rm",
    "split --filter=sh f",
    "zip -TT id a.zip f",
];

/// The same programs asked to do what they usually do: nothing else runs.
const PLAIN: &[&str] = &[
    "git status",
    "git status -s",
    "git status -c core.pager=id",
    "git diff",
    "git diff --stat --no-ext-diff --no-textconv",
    "git diff --text",
    "tar --checkpoint=10 -cf a.tar .",
    "git log --oneline -5",
    "git --no-pager log",
    "git -C sub status",
    "git log -- -c",
    "git fetch -u origin",
    "git config --get user.name",
    "git config --list",
    "git config get user.name",
    "git version",
    "git rev-parse HEAD",
    "/usr/bin/git status",
    "/bin/ls -la",
    "find . -name '*.rs'",
    "find . -type f -executable",
    "find . -newer x -print",
    "sed -n 1,5p f",
    "sed s/a/b/g f",
    "sed -e 's/e/E/g' f",
    "sed -E 's/(a|b)/c/' f",
    "sed '/^e/d' f",
    "sed 'y/abc/xyz/' f",
    "sed -n '/start/,/end/{p;}' f",
    "awk '{print $1}' f",
    "awk -F: '{ print $1 }' f",
    "awk '/a|b/ { print }' f",
    "awk '$1 || $2' f",
    "awk '{ s += $1 } END { print s }' f",
    "awk 'BEGIN { print \"a|b\" }'",
    "tar -tf a.tar",
    "tar -xzf a.tar.gz",
    "tar czf a.tgz dir",
    "rsync -av a b",
    "ssh -o StrictHostKeyChecking=no host uptime",
    "sort -n f",
    "rg pattern",
    "ls -la",
    "wc -l f",
];

fn every_program_pre_approved() -> ShellRules {
    rules(
        &[
            ("git ", PreApproved),
            ("find ", PreApproved),
            ("rm -rf", Blocked),
        ],
        Some(PreApproved),
    )
}

#[test]
fn commands_that_run_other_programs_ask_although_pre_approved() {
    let r = every_program_pre_approved();
    for command in RUN_OTHERS {
        assert_eq!(decide(&r, command), ApprovalRequirement::Ask, "{command}");
    }
    let ask = rules(&[("git ", Ask), ("find ", Ask)], Some(Ask));
    for command in RUN_OTHERS {
        assert_eq!(decide(&ask, command), ApprovalRequirement::Ask, "{command}");
    }
}

#[test]
fn the_same_programs_doing_plain_work_stay_pre_approved() {
    let r = every_program_pre_approved();
    for command in PLAIN {
        assert_eq!(
            decide(&r, command),
            ApprovalRequirement::PreApproved,
            "{command}"
        );
    }
}

#[test]
fn a_rule_that_names_the_words_itself_covers_them_and_no_more() {
    for (rule, command, expected) in [
        (
            "git -c color.ui=never log",
            "git -c color.ui=never log --oneline",
            PreApproved,
        ),
        ("git -c", "git -c alias.x=!id x", Ask),
        ("git log", "git log --ext-diff", Ask),
        ("make test", "make test", PreApproved),
        ("make test", "make test -j4", PreApproved),
        ("make test", "make test -f evil.mk", Ask),
        ("make test", "make test SHELL=/work/evil", Ask),
        ("make ", "make", Ask),
        ("make ", "make test", Ask),
        ("cargo test", "cargo test -p golem-tools", PreApproved),
        (
            "cargo test",
            "cargo test --config 'target.x.runner=\"sh\"'",
            Ask,
        ),
        (
            "python3 tools/lint.py",
            "python3 tools/lint.py --fix",
            PreApproved,
        ),
        ("python3 -c", "python3 -c 'import os'", Ask),
        ("python3 -u", "python3 -u evil.py", Ask),
        ("python3 -u", "python3 -u -c x", Ask),
        (
            "bash scripts/check.sh",
            "bash scripts/check.sh -v",
            PreApproved,
        ),
        ("env ", "env", Ask),
        ("env LANG=C", "env LANG=C rm x", Ask),
        ("find . -name", "find . -name x", PreApproved),
        ("find . -name", "find . -name x -delete", Ask),
        ("find . -exec echo", "find . -exec echo {} \\;", PreApproved),
        (
            "find . -exec echo",
            "find . -exec echo {} \\; -exec rm {} \\;",
            Ask,
        ),
        ("sed -n", "sed -n 1p f", PreApproved),
        ("sed -n", "sed -n 1e f", Ask),
        ("less README.md", "less README.md", PreApproved),
        ("git st", "git st -s", PreApproved),
        ("./scripts/test.sh", "./scripts/test.sh -v", PreApproved),
        ("./scripts/test.sh", "./scripts/test.sh", PreApproved),
        ("/work/git status", "/work/git status", PreApproved),
    ] {
        let r = rules(&[(rule, PreApproved)], None);
        let expected = expected.requirement("");
        assert_eq!(decide(&r, command), expected, "{rule} / {command}");
    }
}

#[test]
fn blocked_stays_blocked_and_blocked_defaults_still_block() {
    let r = rules(&[("git -c", Blocked), ("git ", PreApproved)], None);
    assert!(is_blocked(&decide(&r, "git -c alias.x=!id x")));
    let r = rules(&[("git status", PreApproved)], Some(Blocked));
    assert!(is_blocked(&decide(&r, "git -c core.fsmonitor=id status")));
    assert!(is_blocked(&decide(&r, "env git status")));
    let r = rules(&[("git status", PreApproved)], None);
    assert!(is_blocked(&decide(&r, "git --no-pager status")));
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
    let pre = every_program_pre_approved();
    for command in [
        "git -c alias.x='!rm -f /work/victim.txt; true' x",
        "git clone --upload-pack=x host:repo",
        "git config alias.x '!id'",
        "find . -name '*.tmp' -delete",
        "env rm x",
        "python3 -c 'import os'",
        "make",
        "sed -i s/a/b/ f",
        "awk 'BEGIN { system(\"id\") }'",
        "ssh -o ProxyCommand=id host",
        "tar -I 'sh -c x' -xf a.tar",
    ] {
        let words = split_command(command).unwrap_or_default();
        let caution = pre.caution(&words).unwrap_or_default();
        out.push_str(&format!("{command}\n  asked because {caution}\n"));
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
