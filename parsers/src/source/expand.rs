//! Inputs as the user names them, expanded: folders recursed, globs matched, links that
//! loop back noted once.

use super::error::SourceError;
use super::input::Input;
use std::path::{Path, PathBuf};

/// A path met while expanding the arguments that is not read: a link that loops back to a
/// folder above it, or an entry that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub path: String,
    pub why: String,
    /// Whether files may be missing because of it (a folder not listed), rather than a link
    /// not followed twice.
    pub lost: bool,
}

/// The inputs the arguments name, and what was met but not read.
#[derive(Debug, Default)]
pub struct Expanded {
    pub inputs: Vec<Input>,
    pub unread: Vec<Unread>,
}

/// Expands command-line arguments into inputs: `-` is stdin, folders are walked recursively
/// (sorted, hidden entries skipped), anything that is not a path is tried as a glob.
pub fn expand(args: &[String]) -> Result<Expanded, SourceError> {
    let mut out = Expanded::default();
    for arg in args {
        if arg == "-" {
            out.inputs.push(Input::Stdin);
            continue;
        }
        let path = Path::new(arg);
        if path.is_dir() {
            walk(path, &mut out);
        } else if path.exists() || path.symlink_metadata().is_ok() {
            // a dangling link or an unreadable file is named, to fail with its reason
            out.inputs.push(Input::Path(path.to_path_buf()));
        } else {
            let paths = glob::glob(arg).map_err(|e| SourceError::Glob {
                pattern: arg.clone(),
                msg: e.msg.to_string(),
            })?;
            let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).collect();
            if found.is_empty() {
                return Err(SourceError::NotFound(arg.clone()));
            }
            found.sort();
            for p in found {
                if p.is_dir() {
                    walk(&p, &mut out);
                } else {
                    out.inputs.push(Input::Path(p));
                }
            }
        }
    }
    Ok(out)
}

/// The files under `dir`, depth first in name order, hidden ones (`.name`) left out. Links
/// are followed; a link back to a folder above it is noted once and not followed (not a walk
/// forty levels deep), and a folder that cannot be listed is noted with its reason.
fn walk(dir: &Path, out: &mut Expanded) {
    let entries = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for e in entries {
        match e {
            Ok(e) if !e.file_type().is_dir() => out.inputs.push(Input::Path(e.into_path())),
            Ok(_) => {}
            Err(err) => {
                let path = err
                    .path()
                    .map_or_else(|| dir.display().to_string(), |p| p.display().to_string());
                let (why, lost) = match err.loop_ancestor() {
                    Some(up) => (
                        format!("a link back to {}, not followed again", up.display()),
                        false,
                    ),
                    None => match err.io_error() {
                        Some(io) => (format!("cannot list: {io}"), true),
                        None => (err.to_string(), true),
                    },
                };
                out.unread.push(Unread { path, why, lost });
            }
        }
    }
}
