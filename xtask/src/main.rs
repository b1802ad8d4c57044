//! `cargo run -p xtask -- <task>`: a deterministic simulator of a saturating inference
//! server, writing SGLang logs of any size with known ground truth.
//!
//! Tasks:
//!   sglang-log --out FILE [--bytes N] [--seed S] [--gpu N] [--slow F] [--max-running R]
//!       one GPU's scheduler log (decode, prefill and access lines) of at least N bytes
//!   demo
//!       rewrites `fixtures/runs/demo/` (two GPUs, the second 25% slower) and prints the truth

mod sim;

use anyhow::{bail, Context, Result};
use std::path::PathBuf;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> Result<T> {
    match args.iter().position(|a| a == name) {
        Some(i) => args
            .get(i + 1)
            .with_context(|| format!("{name} needs a value"))?
            .parse()
            .ok()
            .with_context(|| format!("{name}: bad value")),
        None => Ok(default),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("sglang-log") => {
            let out: PathBuf = arg(&args, "--out", PathBuf::from("bench-data/sglang-1g.log"))?;
            let cfg = sim::Config {
                seed: arg(&args, "--seed", 1)?,
                target_bytes: arg(&args, "--bytes", 1u64 << 30)?,
                gpu: arg(&args, "--gpu", 0)?,
                slowdown: arg(&args, "--slow", 1.0)?,
                max_running: arg(&args, "--max-running", 64)?,
                ..sim::Config::default()
            };
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let truth = sim::write_sglang_log(&cfg, &out)?;
            println!("{}: {truth}", out.display());
        }
        Some("demo") => {
            let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/runs/demo"));
            std::fs::create_dir_all(&dir)?;
            for (gpu, slow) in [(0u32, 1.0f64), (1, 1.25)] {
                let cfg = sim::Config { seed: 7 + u64::from(gpu), target_bytes: 300_000, gpu, slowdown: slow, ..sim::Config::default() };
                let path = dir.join(format!("sglang_gpu{gpu}.log"));
                let truth = sim::write_sglang_log(&cfg, &path)?;
                println!("{}: {truth}", path.display());
            }
        }
        _ => bail!("usage: xtask sglang-log --out FILE [--bytes N] [--seed S] [--gpu N] [--slow F] [--max-running R] | xtask demo"),
    }
    Ok(())
}
