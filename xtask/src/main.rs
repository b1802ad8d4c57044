//! `cargo run -p xtask -- <task>`: a deterministic simulator of a saturating inference
//! server, writing SGLang logs of any size with known ground truth.
//!
//! Tasks:
//!   sglang-log --out FILE [--bytes N] [--seed S] [--gpu N] [--slow F] [--max-running R]
//!       one GPU's scheduler log (decode, prefill and access lines) of at least N bytes
//!   completions --out FILE (--records N | --bytes N) [--cap C] [--text-chars N] [--seed S]
//!       [--failure-rate F] [--drift D] [--pipeline] [--prose]
//!       completion JSONL (three shapes mixed, or pipeline records only; text dense in escapes
//!       and non-ASCII, or prose with a few) with its truth printed
//!   wrap-log --collector NAME --in FILE --out FILE [--ahead-h H]
//!       a plain log as a log collector hands it over (docker, cri, journald, loki, shipper,
//!       kubectl, cloudwatch, gcloud, loki-api, elasticsearch), its times following the
//!       lines' stamps (a server H hours ahead of UTC)
//!   envelopes
//!       rewrites `fixtures/formats/envelopes/`: two fixture logs as each collector has them
//!   demo
//!       rewrites `fixtures/runs/demo/` (two GPUs, the second 25% slower) and prints the truth
//!   runs
//!       rewrites the scenario runs under `fixtures/runs/` (fleet, vllm-c128, vllm-c200,
//!       sglang-mrr) and their `*.truth.txt`

use tokstat_parsers::wrappers::envelope::write::{wrap, Wrapping};
use tokstat_parsers::wrappers::envelope::Collector;
use xtask::{gen_completions, scenario, sim};

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

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
                text: if args.iter().any(|a| a == "--prose") {
                    gen_completions::Text::Prose
                } else {
                    gen_completions::Text::Dense
                },
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
        Some("runs") => runs()?,
        Some("wrap-log") => {
            let name: String = arg(&args, "--collector", "docker".to_string())?;
            let c = collector(&name)?;
            let input: PathBuf = arg(&args, "--in", PathBuf::new())?;
            let out: PathBuf = arg(&args, "--out", PathBuf::new())?;
            let ahead: i64 = arg(&args, "--ahead-h", 0)?;
            wrap_log(c, &input, &out, ahead * 3_600_000)?;
        }
        Some("envelopes") => envelopes()?,
        Some("steady-runs") => {
            let out: PathBuf = arg(&args, "--out", PathBuf::from("bench-data/steady"))?;
            steady_runs(&out)?;
        }
        _ => bail!("usage: xtask sglang-log --out FILE [--bytes N] [--seed S] [--gpu N] [--slow F] [--max-running R] | xtask demo | xtask runs"),
    }
    Ok(())
}

/// The collectors by their short names.
const COLLECTORS: [(&str, Collector); 10] = [
    ("docker", Collector::DockerJson),
    ("cri", Collector::Cri),
    ("journald", Collector::Journald),
    ("loki", Collector::LokiJsonl),
    ("shipper", Collector::Shipper),
    ("kubectl", Collector::KubectlPrefix),
    ("cloudwatch", Collector::CloudWatch),
    ("gcloud", Collector::CloudLogging),
    ("loki-api", Collector::LokiApi),
    ("elasticsearch", Collector::Elasticsearch),
];

fn collector(name: &str) -> Result<Collector> {
    COLLECTORS
        .iter()
        .find(|c| c.0 == name)
        .map(|c| c.1)
        .with_context(|| format!("--collector {name}: one of docker, cri, journald, loki, shipper, kubectl, cloudwatch, gcloud, loki-api, elasticsearch"))
}

/// The collector's first time for a log: its first stamp, on the server's clock less
/// `ahead_ms` (2026 for year-less stamps).
fn start_of(text: &str, ahead_ms: i64) -> i64 {
    let mut cal = tokstat_parsers::stamp::Calendar::new(2026, 20_583);
    let mut scratch = String::new();
    text.lines()
        .find_map(|l| {
            cal.resolve(tokstat_parsers::wrappers::prefix::stamp_of(
                l.as_bytes(),
                &mut scratch,
            ))
        })
        .map_or(1_778_371_200_000, |t| t.0)
        - ahead_ms
}

/// `input` as `c` hands it over, a block of lines at a time for line collectors (a document
/// collector's file is written whole).
fn wrap_log(c: Collector, input: &Path, out: &Path, ahead_ms: i64) -> Result<()> {
    use std::io::{BufRead, Write};
    let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
    let r = std::io::BufReader::new(std::fs::File::open(input)?);
    let mut block = String::new();
    let flush = |block: &mut String, w: &mut std::io::BufWriter<std::fs::File>| -> Result<()> {
        let start = start_of(block, ahead_ms);
        let wrapping = Wrapping {
            start_ms: start,
            server_ahead_ms: Some(ahead_ms),
            ..Wrapping::default()
        };
        w.write_all(wrap(c, block, &wrapping).as_bytes())?;
        block.clear();
        Ok(())
    };
    for line in r.lines() {
        block.push_str(&line?);
        block.push('\n');
        if c.per_line() && block.len() > 64 << 20 {
            flush(&mut block, &mut w)?;
        }
    }
    if !block.is_empty() {
        flush(&mut block, &mut w)?;
    }
    w.flush()?;
    Ok(())
}

/// `fixtures/formats/envelopes/`: an SGLang and a vLLM fixture log (the vLLM one's server
/// 8 hours ahead of a UTC collector) as each collector hands them over.
fn envelopes() -> Result<()> {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/formats"));
    let dir = root.join("envelopes");
    std::fs::create_dir_all(&dir)?;
    for (log, ahead_h) in [
        ("sglang/sglang-v0.5.9-v0.5.23-scheduler.log", 0),
        ("vllm/vllm-v1-loggers-v0.11.1-v0.33.0.log", 8),
    ] {
        let engine = log.split('/').next().unwrap_or("log");
        for (name, c) in COLLECTORS {
            let ext = if c.per_line() && !matches!(c, Collector::Cri | Collector::KubectlPrefix) {
                "jsonl"
            } else if c.per_line() {
                "log"
            } else {
                "json"
            };
            let out = dir.join(format!("{engine}-{name}.{ext}"));
            wrap_log(c, &root.join(log), &out, ahead_h * 3_600_000)?;
            println!("{}", out.display());
        }
    }
    Ok(())
}

/// Logs whose steady state is known (the cases of `tests/tests/steady.rs` and a sweep), one
/// SGLang GPU each: `flat-s1`, `flat-s2` (two seeds), `drift-s1` (decode steps 20% slower
/// by the end of two hours), `ramp` (cut 20 minutes into a 30-minute ramp-up), and
/// `sweep/cN` (max running N = 8 … 128, one hour each), `sweep-wide/cN` (8 … 1,024, 15
/// minutes each).
fn steady_runs(dir: &Path) -> Result<()> {
    use scenario::{run_gpu, Engine, Gpu, Phase};
    let gpu = |name: &str, seed| Gpu {
        log_every: 100,
        ..Gpu::new(name, Engine::Sglang, seed)
    };
    let hours = Phase::closed_loop;
    std::fs::create_dir_all(dir.join("sweep"))?;
    for (name, seed, phase) in [
        ("flat-s1", 1, hours(7200.0, 64, 0.0)),
        ("flat-s2", 2, hours(7200.0, 64, 0.0)),
        ("drift-s1", 1, hours(7200.0, 64, 0.2)),
        ("ramp", 3, Phase::cut_in_ramp_up()),
    ] {
        let path = dir.join(format!("{name}.log"));
        run_gpu(&gpu(name, seed), &[phase], &path)?;
        println!("{}", path.display());
    }
    for n in [8, 16, 32, 64, 128] {
        let path = dir.join("sweep").join(format!("c{n}.log"));
        run_gpu(
            &gpu(&format!("c{n}"), 10 + n as u64),
            &[hours(3600.0, n, 0.0)],
            &path,
        )?;
        println!("{}", path.display());
    }
    // past the knee (one more request adds under a tenth of a request's rate from 360 on)
    std::fs::create_dir_all(dir.join("sweep-wide"))?;
    for n in [8, 32, 128, 256, 512, 1024] {
        let path = dir.join("sweep-wide").join(format!("c{n}.log"));
        run_gpu(
            &gpu(&format!("c{n}"), 10 + n as u64),
            &[hours(900.0, n, 0.0)],
            &path,
        )?;
        println!("{}", path.display());
    }
    Ok(())
}

/// The scenario runs the end-to-end tests assert against.
fn runs() -> Result<()> {
    use scenario::{write_run, Engine, Gpu, Phase, ScrapeFiles};
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/runs"));
    let mut out: Vec<(&str, String)> = Vec::new();

    // seven SGLang GPUs, gpu3 25% slower; max_tokens 4096 (about 18% of outputs hit it),
    // then every server's scheduler dies of CUDA out of memory, the servers restart with a
    // longer context and max_tokens 8192, and requests fail (HTTP 500) for the first minute
    // after the restart
    let fleet: Vec<(Gpu, Vec<Phase>)> = (0..7)
        .map(|g| {
            let gpu = Gpu {
                slowdown: if g == 3 { 1.0 / 0.75 } else { 1.0 },
                mean_output: 2388.0,
                log_every: 100,
                ..Gpu::new(&format!("gpu{g}"), Engine::Sglang, 100 + g)
            };
            let phases = vec![
                Phase {
                    secs: 480.0,
                    max_running: 48,
                    cap: 4096,
                    context_len: 8192,
                    drain: false,
                    crash: true,
                    gap_after: 90.0,
                    ..Phase::default()
                },
                Phase {
                    secs: 200.0,
                    max_running: 48,
                    cap: 8192,
                    context_len: 16384,
                    fail_secs: 60.0,
                    fail_rate: 0.4,
                    ..Phase::default()
                },
            ];
            (gpu, phases)
        })
        .collect();
    out.push(("fleet", write_run(&root.join("fleet"), &fleet, true, "7 SGLang GPUs (gpu3 25% slower); cap 4096, restart with context 16384 and cap 8192, failures after the restart")?));

    // one vLLM server driven by 128 and by 200 closed-loop clients: saturated past ~80
    for c in [128usize, 200] {
        // the first with Prometheus scrapes every 15 s in one file, the second every 60 s in
        // files named by their time
        let scrapes = if c == 128 {
            (15.0, ScrapeFiles::OneFile)
        } else {
            (60.0, ScrapeFiles::PerScrape)
        };
        let gpu = Gpu {
            base: 0.008,
            per_req: 0.0009,
            mean_output: 600.0,
            scrapes: Some(scrapes),
            ..Gpu::new("vllm", Engine::Vllm, 7)
        };
        let phases = vec![Phase {
            secs: 1500.0,
            max_running: 256,
            cap: 2048,
            context_len: 16384,
            clients: Some(c),
            ramp_per_s: 0.25,
            ..Phase::default()
        }];
        let name = if c == 128 { "vllm-c128" } else { "vllm-c200" };
        out.push((
            name,
            write_run(
                &root.join(name),
                &[(gpu, phases)],
                false,
                &format!("vLLM, {c} closed-loop clients joining at 0.25/s, max_num_seqs 256"),
            )?,
        ));
    }

    // SGLang with max_running_requests 16, restarted with 40
    let gpu = Gpu {
        log_every: 100,
        ..Gpu::new("sglang", Engine::Sglang, 11)
    };
    let phases = vec![
        Phase {
            secs: 300.0,
            max_running: 16,
            drain: false,
            gap_after: 60.0,
            ..Phase::default()
        },
        Phase {
            secs: 300.0,
            max_running: 40,
            ..Phase::default()
        },
    ];
    out.push((
        "sglang-mrr",
        write_run(
            &root.join("sglang-mrr"),
            &[(gpu, phases)],
            false,
            "SGLang, max_running_requests 16, restarted with 40",
        )?,
    ));

    for (name, text) in out {
        print!("{name}:\n{text}");
        std::fs::write(root.join(format!("{name}.truth.txt")), text)?;
    }
    Ok(())
}
