//! `cargo run -p xtask -- <task>`: a deterministic simulator of a saturating inference
//! server, writing SGLang logs of any size with known ground truth.
//!
//! Tasks:
//!   sglang-log --out FILE [--bytes N] [--seed S] [--gpu N] [--slow F] [--max-running R]
//!       one GPU's scheduler log (decode, prefill and access lines) of at least N bytes
//!   completions --out FILE (--records N | --bytes N) [--cap C] [--text-chars N] [--seed S]
//!       [--failure-rate F] [--drift D] [--pipeline]
//!       completion JSONL (three shapes mixed) with its truth printed
//!   demo
//!       rewrites `fixtures/runs/demo/` (two GPUs, the second 25% slower) and prints the truth

mod gen_completions;
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
        Some("completions") => {
            let out: PathBuf = arg(&args, "--out", PathBuf::from("bench-data/completions-1g.jsonl"))?;
            let cfg = gen_completions::Config {
                seed: arg(&args, "--seed", 1)?,
                records: arg(&args, "--records", 0)?,
                target_bytes: arg(&args, "--bytes", 0)?,
                cap: arg(&args, "--cap", 4096)?,
                text_chars: arg(&args, "--text-chars", 10_000)?,
                failure_rate: arg(&args, "--failure-rate", 0.005)?,
                drift: arg(&args, "--drift", 1.0)?,
                pipeline_only: args.iter().any(|a| a == "--pipeline"),
            };
            if cfg.records == 0 && cfg.target_bytes == 0 {
                bail!("completions: give --records N or --bytes N");
            }
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let t = gen_completions::write(&cfg, &out)?;
            println!("{}: {t:?}", out.display());
        }
        Some("demo") => {
            let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/runs/demo"));
            std::fs::create_dir_all(&dir)?;
            let mut truth_file = String::from("# written by `cargo run -p xtask -- demo` (the simulator's ground truth for fixtures/runs/demo)\n");
            for (gpu, slow) in [(0u32, 1.0f64), (1, 1.25)] {
                let cfg = sim::Config { seed: 7 + u64::from(gpu), target_bytes: 300_000, gpu, slowdown: slow, ..sim::Config::default() };
                let name = format!("sglang_gpu{gpu}.log");
                let truth = sim::write_sglang_log(&cfg, &dir.join(&name))?;
                println!("{name}: {truth}");
                truth_file.push_str(&format!("{name}: {truth}\n"));
            }
            std::fs::write(dir.join("../demo.truth.txt"), truth_file)?;
        }
        _ => bail!("usage: xtask sglang-log --out FILE [--bytes N] [--seed S] [--gpu N] [--slow F] [--max-running R] | xtask demo"),
    }
    Ok(())
}
