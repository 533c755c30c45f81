//! Why a crate could not be checked.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// A file that could not be read, parsed or placed in a crate: the check cannot say whether the
/// crate has a loop.
#[derive(Debug)]
pub struct Error {
    path: PathBuf,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Read(io::Error),
    Parse {
        line: usize,
        message: String,
    },
    MissingModule {
        name: String,
        looked_at: [PathBuf; 2],
    },
    Unreached,
}

impl Error {
    pub(crate) fn read(path: &Path, source: io::Error) -> Self {
        Error {
            path: path.to_owned(),
            kind: Kind::Read(source),
        }
    }

    pub(crate) fn parse(path: &Path, source: &syn::Error) -> Self {
        let kind = Kind::Parse {
            line: source.span().start().line,
            message: source.to_string(),
        };
        Error {
            path: path.to_owned(),
            kind,
        }
    }

    pub(crate) fn missing_module(path: &Path, name: &str, flat: &Path, nested: &Path) -> Self {
        let looked_at = [flat.to_owned(), nested.to_owned()];
        Error {
            path: path.to_owned(),
            kind: Kind::MissingModule {
                name: name.to_owned(),
                looked_at,
            },
        }
    }

    pub(crate) fn unreached(path: &Path) -> Self {
        Error {
            path: path.to_owned(),
            kind: Kind::Unreached,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.kind {
            Kind::Read(source) => write!(f, "{path}: cannot read: {source}"),
            Kind::Parse { line, message } => write!(f, "{path}:{line}: cannot parse: {message}"),
            Kind::MissingModule {
                name,
                looked_at: [flat, nested],
            } => write!(
                f,
                "{path}: no file for `mod {name};` (neither {} nor {})",
                flat.display(),
                nested.display()
            ),
            Kind::Unreached => write!(
                f,
                "{path}: no crate root of its package reaches it through `mod` declarations, so \
                 its imports cannot be checked"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Read(source) => Some(source),
            _ => None,
        }
    }
}
