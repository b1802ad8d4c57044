//! An input as the user names it, and the instance each log is named after.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One input as named on the command line or found in a folder, or handed over in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Path(PathBuf),
    Stdin,
    /// A file's bytes handed over by a program (the Python package's `read_bytes`: a Spark
    /// `binaryFile` row, an object store's object), under the file's name: read as the file
    /// would be, where it is (never copied), its name giving its instance.
    Bytes(Arc<Named>),
}

/// Bytes in memory, and the name of the file they are.
#[derive(Debug, PartialEq, Eq)]
pub struct Named {
    pub name: PathBuf,
    pub bytes: Arc<Vec<u8>>,
}

impl Input {
    /// An input of bytes in memory, named `name`.
    pub fn bytes(name: impl Into<PathBuf>, bytes: impl Into<Arc<Vec<u8>>>) -> Input {
        Input::Bytes(Arc::new(Named {
            name: name.into(),
            bytes: bytes.into(),
        }))
    }

    /// The path the input is named by (none for stdin).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Input::Path(p) => Some(p),
            Input::Bytes(b) => Some(&b.name),
            Input::Stdin => None,
        }
    }
}

impl Input {
    /// The name shown in reports (`-` for stdin).
    pub fn display(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Bytes(b) => b.name.display().to_string(),
            Input::Stdin => "-".to_string(),
        }
    }

    /// The file stem, used as the default instance name (`gpu3` for `logs/gpu3.log.zst`).
    pub fn stem(&self) -> String {
        match self.path() {
            None => "stdin".to_string(),
            Some(p) => {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let mut stem = name.as_str();
                // compression, a rotation number (`gpu0.log.1`), then the kind of file
                loop {
                    let before = stem;
                    for ext in [
                        ".zst", ".zstd", ".gz", ".log", ".txt", ".jsonl", ".json", ".out", ".err",
                    ] {
                        if let Some(s) = stem.strip_suffix(ext) {
                            if !s.is_empty() {
                                stem = s;
                            }
                        }
                    }
                    // `gpu0.log.1`, not `v0.5`
                    if let Some((s, n)) = stem.rsplit_once('.') {
                        let rotated = [".log", ".txt", ".out", ".err", ".jsonl", ".json"]
                            .iter()
                            .any(|e| s.ends_with(e));
                        if rotated && !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) {
                            stem = s;
                        }
                    }
                    if stem == before {
                        break;
                    }
                }
                stem.to_string()
            }
        }
    }
}

/// The instance name of each input: its [`Input::stem`], so that rotated parts of one log
/// (`gpu0.log`, `gpu0.log.1.gz`) are one instance; where inputs in different folders share
/// a stem (`node1/gpu0.log`, `node2/gpu0.log`) the folder name is put in front.
pub fn instance_names(inputs: &[Input]) -> Vec<String> {
    use std::collections::{HashMap, HashSet};
    let parent = |i: &Input| i.path().and_then(Path::parent).map(Path::to_path_buf);
    let stems: Vec<String> = inputs.iter().map(Input::stem).collect();
    let mut dirs: HashMap<&str, HashSet<Option<PathBuf>>> = HashMap::new();
    for (input, stem) in inputs.iter().zip(&stems) {
        dirs.entry(stem).or_default().insert(parent(input));
    }
    inputs
        .iter()
        .zip(&stems)
        .map(|(input, stem)| {
            let dir = parent(input);
            let name = dir.as_deref().and_then(Path::file_name);
            match name {
                Some(d) if dirs[stem.as_str()].len() > 1 => {
                    format!("{}/{stem}", d.to_string_lossy())
                }
                _ => stem.clone(),
            }
        })
        .collect()
}
