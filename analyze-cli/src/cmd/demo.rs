//! `tokstat demo`: the report on demo runs carried inside the binary (packed by `build.rs`
//! from `fixtures/runs/`), so it works from any folder after `cargo install`; `--compare`
//! compares two of them.

use crate::cli::DemoArgs;
use crate::compare::{self, RunSpec};
use crate::render::{Format, Style};
use crate::report::Options;
use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The demo runs: two GPUs' SGLang logs (`demo/`), the job's completions (`completions/`:
/// three 500-record batches, one zstd-compressed, one cut short), and vLLM at 128 and 200
/// clients (`vllm-c128/`, `vllm-c200/`).
const ARCHIVE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/demo-runs.gz"));

/// FNV-1a of the archive: names the folder it is unpacked into, so that a new build never
/// reads an old build's runs.
fn fingerprint(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Unpacks the archive into `dir`.
fn unpack(dir: &Path) -> Result<()> {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(ARCHIVE).read_to_end(&mut raw)?;
    let mut rest = &raw[..];
    let mut take = |n: usize| -> Result<&[u8]> {
        if rest.len() < n {
            bail!("the demo archive inside this binary is damaged");
        }
        let (a, b) = rest.split_at(n);
        rest = b;
        Ok(a)
    };
    loop {
        let Ok(len) = take(4) else { break };
        let len = u32::from_le_bytes(len.try_into()?) as usize;
        let path = std::str::from_utf8(take(len)?)?.to_string();
        let size = u64::from_le_bytes(take(8)?.try_into()?) as usize;
        let data = take(size)?;
        let target = dir.join(&path);
        std::fs::create_dir_all(target.parent().unwrap_or(dir))?;
        std::fs::write(&target, data)?;
    }
    Ok(())
}

/// The folder the demo runs are unpacked in (once per build, shared by later runs).
fn runs() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("tokstat-demo-{:016x}", fingerprint(ARCHIVE)));
    if dir.join(".complete").is_file() {
        return Ok(dir);
    }
    // unpacked beside, then renamed into place: a concurrent demo never sees half of it
    let part = dir.with_extension(format!("part{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&part);
    unpack(&part)
        .with_context(|| format!("cannot unpack the demo runs into {}", part.display()))?;
    std::fs::write(part.join(".complete"), b"")?;
    if std::fs::rename(&part, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&part);
        if !dir.join(".complete").is_file() {
            bail!("cannot unpack the demo runs into {}", dir.display());
        }
    }
    Ok(dir)
}

pub fn run(args: &DemoArgs, style: Style, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let dir = runs()?;
    let path = |p: &str| dir.join(p).display().to_string();
    let format: Format = args.format.format;
    let opts = Options {
        inputs: vec![path("demo"), path("completions")],
        year: Some(2026),
        ..Options::default()
    };
    // a heading for people; JSON and HTML stay one document
    let heading = matches!(format, Format::Table | Format::Markdown);
    if args.compare {
        if heading {
            let h = "tokstat demo --compare: vLLM at 128 clients against 200 on one server\n\n";
            out.write_all(style.finish(h.into()).as_bytes())?;
        }
        let c = compare::build(&compare::Options {
            runs: vec![
                RunSpec::parse(&format!("c128={}", path("vllm-c128"))),
                RunSpec::parse(&format!("c200={}", path("vllm-c200"))),
            ],
            report: opts,
            threshold: 0.02,
            force: false,
            segments: false,
        })?;
        format.render_comparison(&c, style, out)?;
        return Ok(0);
    }
    if heading {
        let h = "tokstat demo: a bundled run (two GPUs' SGLang logs and the job's completions)\n\n";
        out.write_all(style.finish(h.into()).as_bytes())?;
    }
    super::report::run(&opts, format, true, false, style, out, err)
}
