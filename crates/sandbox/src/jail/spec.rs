//! The wire between the two sides of the jail (see `mod.rs`): everything the parent
//! (`parent/`, in the golem-forge process) and the helper's processes (`inside/`) both know.
//! It is the only module both sides use; neither imports the other's modules
//! (`crates/cli/tests/architecture/jail.rs`).
//!
//! - How the parent starts the helper: the first argument [`HELPER_ARG`] and the modes the
//!   parent asks for ([`STANDBY_ARG`], [`PROBE_ARG`]), the descriptor [`STDIN_FD`] that carries
//!   the program's stdin pipe down to stage 2, the line [`GO`] that starts a run, and the exit
//!   code [`SETUP_FAILED`] of a jail that could not be built.
//! - The files of the private run directory: the jail spec (zones, network, limits: written
//!   when the helper starts, ahead of its run), the run spec (program, arguments, environment,
//!   working zone, stdio: written just before `go`), the script, and the report (JSON lines
//!   appended by both stages). None of it is visible inside the jail (only the script is copied
//!   in). What the spec carries: the zones ([`SpecZone`], named apart from
//!   [`RESERVED_NAMES`]), the network's routes ([`NetRoutes`]) and the limits ([`SpecLimits`]).
//! - What the probe prints on stdout: [`KernelSupport`].

use std::fmt;
use std::io::{BufRead, Write};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The first argument that puts the binary in jail-helper mode.
pub const HELPER_ARG: &str = "__jail";

/// The helper's mode (after [`HELPER_ARG`]) that builds a jail ahead of its run: `--standby DIR
/// PROCS…` joins the cgroups whose `cgroup.procs` files follow, then is stage 1 for the jail
/// spec in `DIR`.
pub(crate) const STANDBY_ARG: &str = "--standby";

/// The helper's mode (after [`HELPER_ARG`]) that tries each layer on itself and prints the
/// findings ([`KernelSupport`]) as JSON.
pub(crate) const PROBE_ARG: &str = "--probe";

/// The helper's file descriptor holding the read end of the program's stdin pipe (passed on
/// to stage 2).
pub(crate) const STDIN_FD: i32 = 3;

/// What starts a run, on the helper's stdin.
pub(crate) const GO: &[u8] = b"go\n";

/// Exit code of the helper when the jail could not be built (the report says why).
pub(crate) const SETUP_FAILED: i32 = 125;

/// Names a zone cannot have, because its `/<name>` is part of the jail's own tree (the parent
/// refuses them; the inside builds that tree).
pub(crate) const RESERVED_NAMES: &[&str] = &[
    "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "tmp", "proc", "dev",
];

/// The jail spec's file name in the run directory (written when the helper starts).
pub(crate) const JAIL_SPEC_FILE: &str = "jail.json";
/// The run spec's file name in the run directory (written just before `go`).
pub(crate) const RUN_SPEC_FILE: &str = "run.json";
/// The report's file name in the run directory.
pub(crate) const REPORT_FILE: &str = "report.jsonl";
/// The directory in the run directory that holds the script. With namespaces the script is
/// copied into the jail's own size-limited `/tmp`; without (best effort) this directory is
/// `/tmp`.
pub(crate) const SCRIPT_DIR: &str = "script";
/// The empty directory in the run directory that the jail's new root is mounted on.
pub(crate) const ROOT_DIR: &str = "root";

/// `256.0 MiB`: a limit in binary units, as limits are configured.
pub(crate) fn human_mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// One zone as the helper mounts it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct SpecZone {
    /// The zone's name: it appears at `/<name>` in the jail.
    pub name: String,
    /// The host directory (canonical).
    pub host: PathBuf,
    /// Whether processes may write it.
    pub writable: bool,
    /// For a run whose writes become a changeset: the copy-on-write layer the zone is seen
    /// through (`None`: the zone itself, as always).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlay: Option<SpecOverlay>,
}

/// The private directories of a zone's copy-on-write layer (host paths, made by the parent
/// outside the run directory; the program sees them only as the zone's merged view).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct SpecOverlay {
    /// What the run changed (the overlay's upper directory).
    pub upper: PathBuf,
    /// The overlay's work directory, on the same file system as `upper`.
    pub work: PathBuf,
}

/// The resource limits, as numbers.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct SpecLimits {
    pub cpu_secs: u64,
    pub memory_bytes: u64,
    pub processes: u64,
    pub open_files: u64,
    pub file_size_bytes: u64,
    pub tmp_bytes: u64,
    pub tmp_files: u64,
}

/// The jail, as the helper builds it before its run is known: everything fixed by the
/// toolset (zones, network, limits).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct JailSpec {
    /// The run directory (spec files, report, script, root mount point).
    pub dir: PathBuf,
    pub zones: Vec<SpecZone>,
    pub network: bool,
    /// With the network on: the jail's own network and its routes (`parent/net.rs`); `None` shares
    /// the host's network (best effort without `slirp4netns`).
    #[serde(default)]
    pub net: Option<NetRoutes>,
    pub best_effort: bool,
    pub limits: SpecLimits,
}

impl JailSpec {
    /// The report file (JSON lines).
    pub fn report(&self) -> PathBuf {
        self.dir.join(REPORT_FILE)
    }

    /// The host directory holding the script.
    pub fn script_dir(&self) -> PathBuf {
        self.dir.join(SCRIPT_DIR)
    }

    /// The empty host directory the new root is mounted on.
    pub fn root(&self) -> PathBuf {
        self.dir.join(ROOT_DIR)
    }
}

/// An IPv4 network: an address and a prefix length (`10.1.0.0/16`; a bare address is `/32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ipv4Network {
    addr: Ipv4Addr,
    prefix: u8,
}

impl Ipv4Network {
    /// Parses `10.1.0.0/16` or `10.1.2.3`; the address is masked to the prefix.
    pub fn parse(text: &str) -> Result<Ipv4Network, NotAnIpv4Network> {
        let (addr, prefix) = match text.trim().split_once('/') {
            Some((addr, prefix)) => (addr, prefix.parse::<u8>().ok().filter(|p| *p <= 32)),
            None => (text.trim(), Some(32)),
        };
        let (Ok(addr), Some(prefix)) = (addr.parse::<Ipv4Addr>(), prefix) else {
            return Err(NotAnIpv4Network {
                text: text.to_owned(),
            });
        };
        let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        Ok(Ipv4Network {
            addr: Ipv4Addr::from(u32::from(addr) & mask),
            prefix,
        })
    }

    /// The one address `addr` (a `/32`).
    pub(crate) fn host(addr: Ipv4Addr) -> Ipv4Network {
        Ipv4Network { addr, prefix: 32 }
    }

    /// The network's address (masked to its prefix).
    pub(crate) fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    /// The prefix length, 0 to 32.
    pub(crate) fn prefix(&self) -> u8 {
        self.prefix
    }
}

/// Text that [`Ipv4Network::parse`] does not read as an address or a network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an IPv4 address or network such as \"10.1.2.3\" or \"10.1.0.0/16\"")]
pub struct NotAnIpv4Network {
    /// The text as given.
    pub text: String,
}

impl fmt::Display for Ipv4Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// The routes of a jail's namespace, decided by the parent (`parent/net.rs`) and added by
/// stage 1 (`inside/net_stack.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NetRoutes {
    /// `prohibit`: [`super::BLOCKED_NETWORKS`] and the host's own addresses.
    pub blocked: Vec<Ipv4Network>,
    /// Through the stack: what the policy allows.
    pub allowed: Vec<Ipv4Network>,
    /// The `slirp4netns` to run.
    pub stack: PathBuf,
}

/// One run in a built jail: the program and what it gets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct RunSpec {
    pub program: String,
    /// A script file in the script directory, passed as the first argument.
    pub script: Option<String>,
    pub args: Vec<String>,
    /// Variables on top of the fixed base environment (`PATH`, `HOME`, `TMPDIR`, …).
    pub env: Vec<(String, String)>,
    pub cwd_zone: Option<String>,
    /// What the program's stdin and stdout are.
    #[serde(default)]
    pub stdio: ProgramStdio,
}

/// How the parent talks to the program.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ProgramStdio {
    /// `Jail::run`: stdin is `/dev/null`, stdout is captured.
    #[default]
    Captured,
    /// `Jail::spawn`: stdin is the parent's pipe, stdout goes to the parent.
    Pipes,
    /// `Jail::spawn_with_channel`: the parent's pipes reach the program over its private
    /// channel (`inside/channel.rs`); stdin is `/dev/null` and stdout goes to stderr.
    Channel,
}

/// A spec file that is not the JSON its reader expects.
#[derive(Debug, thiserror::Error)]
#[error("parsing {}: {source}", path.display())]
pub(crate) struct SpecFileError {
    /// The file, as its reader names it.
    path: PathBuf,
    source: serde_json::Error,
}

/// Reads a JSON spec from `reader` (a path's file, or one opened beneath the run directory).
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    reader: impl std::io::Read,
    what: &Path,
) -> Result<T, SpecFileError> {
    serde_json::from_reader(std::io::BufReader::new(reader)).map_err(|source| SpecFileError {
        path: what.to_path_buf(),
        source,
    })
}

/// How the program's process ended, as stage 1 saw it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ReportedExit {
    Code(i32),
    Signal(i32),
}

/// One line of the report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ReportLine {
    /// A layer that could not be applied (best effort only).
    Weakened(String),
    /// The jail could not be built; the program did not run.
    SetupError(String),
    /// The program could not be started (exit 126 or 127 follows).
    ExecError(String),
    /// How the program ended.
    Exit(ReportedExit),
    /// Stage 2's process id, as stage 1 (in the parent's PID namespace) sees it; written only
    /// for runs whose zones have copy-on-write layers, whose parent must know when every
    /// process of the jail is gone before it reads what they changed.
    Stage2(u32),
}

/// Appends one line to the report. Errors are ignored: the parent treats a missing line as
/// "unknown" and falls back to the helper's own exit status.
pub(crate) fn append(report: &mut impl Write, line: &ReportLine) {
    if let Ok(mut text) = serde_json::to_string(line) {
        text.push('\n');
        let _ = report.write_all(text.as_bytes());
        let _ = report.flush();
    }
}

/// Reads every well-formed line of a report (a cut last line is skipped).
pub(crate) fn read_report(path: &Path) -> Vec<ReportLine> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str(&line).ok())
        .collect()
}

/// Whether one layer is available, with a detail or the reason it is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LayerSupport {
    /// Available (the detail says which version, when there is one).
    Available(String),
    /// Missing, and why.
    Missing(String),
}

impl LayerSupport {
    /// Whether the layer is available.
    pub fn is_available(&self) -> bool {
        matches!(self, LayerSupport::Available(_))
    }
}

/// The jail layers this kernel offers: what the probe (`inside/probe.rs`) prints, read by
/// [`KernelSupport::detect`] (`parent/support.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelSupport {
    /// User (and with them mount, PID and network) namespaces.
    pub user_namespaces: LayerSupport,
    /// Landlock, with its ABI version.
    pub landlock: LayerSupport,
    /// seccomp filters.
    pub seccomp: LayerSupport,
}

impl KernelSupport {
    /// Each layer with its name, for reports such as `golem-forge check`.
    pub fn layers(&self) -> [(&'static str, &LayerSupport); 3] {
        [
            ("user namespaces", &self.user_namespaces),
            ("Landlock", &self.landlock),
            ("seccomp", &self.seccomp),
        ]
    }

    /// What a strict jail needs and this kernel lacks, one sentence each.
    pub fn missing(&self) -> Vec<String> {
        self.layers()
            .into_iter()
            .filter_map(|(name, layer)| match layer {
                LayerSupport::Available(_) => None,
                LayerSupport::Missing(why) => Some(format!("{name}: {why}")),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_lines_round_trip_and_a_cut_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        append(&mut file, &ReportLine::Weakened("no seccomp".into()));
        append(&mut file, &ReportLine::Exit(ReportedExit::Signal(9)));
        file.write_all(b"{\"exit\":{\"co").unwrap();
        assert_eq!(
            read_report(&path),
            vec![
                ReportLine::Weakened("no seccomp".into()),
                ReportLine::Exit(ReportedExit::Signal(9)),
            ]
        );
    }

    #[test]
    fn networks_parse_masked_and_bad_ones_say_what_is_expected() {
        let parse = |text| Ipv4Network::parse(text).map(|n| n.to_string());
        assert_eq!(parse("10.1.2.3").as_deref(), Ok("10.1.2.3/32"));
        assert_eq!(parse("10.1.2.3/16").as_deref(), Ok("10.1.0.0/16"));
        assert_eq!(parse("0.0.0.0/0").as_deref(), Ok("0.0.0.0/0"));
        for bad in ["10.1.2", "10.1.2.3/33", "intranet", "::1", "10.0.0.0/x"] {
            let err = Ipv4Network::parse(bad).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "{bad:?} is not an IPv4 address or network such as \"10.1.2.3\" or \
                     \"10.1.0.0/16\""
                )
            );
        }
    }
}
