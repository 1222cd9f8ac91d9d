//! Raising the soft limit on open files to the hard limit, first thing in `main` (not in the
//! jail helper mode, whose jail sets its own limits). Many systems start a process with a soft
//! limit of 1,024 descriptors, which a thousand idle connections to the HTTP front ends
//! (`serve`, `mcp --http`) would use up; the hard limit is what the administrator allows. The
//! processes golem-forge starts outside the jail inherit the raised limit. Failing is a
//! warning, never a stop.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Sets the soft `RLIMIT_NOFILE` to the hard one, when it is lower.
pub fn raise_open_file_limit() {
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return;
    }
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    if let Err(err) = setrlimit(Resource::Nofile, raised) {
        eprintln!("golem-forge: warning: cannot raise the limit on open files: {err}");
    }
}
