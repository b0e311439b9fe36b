//! One error type for the whole crate, so callers (test suites, the CLI) can print a single
//! actionable message whether the failure was a missing tool, unparsable Verilog or a C++ build.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Everything that can go wrong between Verilog text and a running model.
///
/// Each variant's `Display` says what to do next, because these messages usually end up as the
/// only line a developer sees in a failed CI job.
#[derive(Debug)]
pub enum CosimError {
    /// `verilator` could not be executed: nothing else in the crate can work without it.
    VerilatorNotFound {
        /// The program name or path that was tried.
        program: String,
    },
    /// Another build tool (`make`, `g++`) could not be executed.
    ToolNotFound {
        /// The program that was tried.
        program: String,
    },
    /// The Verilog text did not contain the module, or its ports could not be understood.
    Parse {
        /// The module that was being looked for.
        module: String,
        /// What was wrong.
        message: String,
    },
    /// A build step (Verilator, make, the bench binary) exited unsuccessfully.
    Build {
        /// Short name of the step, e.g. "verilator" or "link shim".
        step: String,
        /// The command line that failed, for copy-paste reproduction.
        command: String,
        /// The last lines of the step's combined stdout/stderr.
        output_tail: String,
    },
    /// The shared library was built but could not be loaded or does not match the port map.
    Load {
        /// The shared library path.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The native benchmark ran but its output could not be understood, or its input was invalid.
    Bench {
        /// What went wrong.
        message: String,
    },
    /// A filesystem operation failed.
    Io {
        /// What was being done, including the path.
        context: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl CosimError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        CosimError::Io {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn parse(module: &str, message: impl Into<String>) -> Self {
        CosimError::Parse {
            module: module.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for CosimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CosimError::VerilatorNotFound { program } => write!(
                f,
                "verilator not found on PATH (tried `{program}`): run `make deps` \
                 (apt-get install verilator)"
            ),
            CosimError::ToolNotFound { program } => write!(
                f,
                "`{program}` not found on PATH: it is needed to compile the Verilated model \
                 (apt-get install build-essential)"
            ),
            CosimError::Parse { module, message } => {
                write!(f, "cannot read the ports of Verilog module `{module}`: {message}")
            }
            CosimError::Build {
                step,
                command,
                output_tail,
            } => write!(
                f,
                "cosim build step `{step}` failed\n  command: {command}\n  output (tail):\n{output_tail}"
            ),
            CosimError::Load { path, message } => {
                write!(f, "cannot load cosim library {}: {message}", path.display())
            }
            CosimError::Bench { message } => write!(f, "native benchmark: {message}"),
            CosimError::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for CosimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CosimError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
