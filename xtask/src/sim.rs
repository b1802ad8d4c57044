//! The simulated server: requests arrive faster than they can be served (a saturated job),
//! up to `max_running` decode together; each decode step emits one token per running request
//! and takes `base + per_req × running` seconds (× `slowdown`). Like SGLang it logs a
//! `Decode batch` line every 40 decode steps (throughput = tokens since the last line ÷ wall
//! time since it), a `Prefill batch` line when requests join, and a uvicorn access line when
//! one finishes. Everything is seeded, so the same config writes the same bytes.

use anyhow::Result;
use std::fmt;
use std::io::{BufWriter, Write};
use std::path::Path;

/// xorshift64*: small, fast, deterministic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn f(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    pub target_bytes: u64,
    pub gpu: u32,
    pub slowdown: f64,
    pub max_running: usize,
    /// Output token cap (`max_tokens`).
    pub cap: u32,
    pub kv_capacity: u64,
    pub decode_log_interval: u32,
    /// Start, seconds since the epoch (naive local time).
    pub start: i64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            seed: 1,
            target_bytes: 1 << 20,
            gpu: 0,
            slowdown: 1.0,
            max_running: 64,
            cap: 4096,
            kv_capacity: 1_048_576,
            decode_log_interval: 40,
            start: 1_778_371_200, // 2026-05-10 00:00:00
        }
    }
}

/// What the simulator knows to be true about the log it wrote.
#[derive(Debug, Default)]
pub struct Truth {
    pub bytes: u64,
    pub lines: u64,
    pub decode_lines: u64,
    pub prefill_lines: u64,
    pub access_lines: u64,
    pub generated_tokens: u64,
    pub finished: u64,
    pub capped: u64,
    pub seconds: f64,
}

impl fmt::Display for Truth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes, {} lines ({} decode, {} prefill, {} access), {} tokens generated in {:.0} s ({:.1} tok/s), {} requests finished, {} hit the cap",
            self.bytes, self.lines, self.decode_lines, self.prefill_lines, self.access_lines, self.generated_tokens,
            self.seconds, self.generated_tokens as f64 / self.seconds.max(1e-9), self.finished, self.capped
        )
    }
}

struct Req {
    prompt: u32,
    target: u32,
    done: u32,
}

fn stamp(secs: f64) -> String {
    let t = secs.floor() as i64;
    let days = t.div_euclid(86_400);
    let sod = t.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

pub fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Writes one GPU's log until it holds at least `target_bytes`.
pub fn write_sglang_log(cfg: &Config, path: &Path) -> Result<Truth> {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut rng = Rng::new(cfg.seed);
    let mut t = cfg.start as f64;
    let mut truth = Truth::default();
    let tag = format!("TP{}", cfg.gpu);
    let mut line = String::with_capacity(512);
    let emit =
        |out: &mut BufWriter<std::fs::File>, line: &mut String, truth: &mut Truth| -> Result<()> {
            line.push('\n');
            out.write_all(line.as_bytes())?;
            truth.bytes += line.len() as u64;
            truth.lines += 1;
            line.clear();
            Ok(())
        };
    use std::fmt::Write as _;
    write!(line, "[{}] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, max_running_requests={}, decode_log_interval={})", stamp(t), cfg.max_running, cfg.decode_log_interval)?;
    emit(&mut out, &mut line, &mut truth)?;
    write!(line, "[{} {tag}] max_total_num_tokens={}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={}, context_len=40960, available_gpu_mem=8.90 GB", stamp(t), cfg.kv_capacity, cfg.max_running)?;
    emit(&mut out, &mut line, &mut truth)?;
    let mut running: Vec<Req> = Vec::with_capacity(cfg.max_running);
    let mut steps = 0u32;
    let mut last_log_t = t;
    let mut tokens_since_log = 0u64;
    let mut queue: u64 = 500;
    let first_t = t;
    while truth.bytes < cfg.target_bytes {
        // admit new requests (a prefill batch)
        if running.len() < cfg.max_running {
            let n = (cfg.max_running - running.len()).min(1 + (rng.f() * 4.0) as usize);
            let mut new_tokens = 0u32;
            for _ in 0..n {
                let prompt = 200 + (rng.f() * 1800.0) as u32;
                // long-tailed output lengths; some exceed the cap and are cut there
                let want = (-(1.0 - rng.f()).ln() * 1400.0) as u32 + 16;
                running.push(Req {
                    prompt,
                    target: want.min(cfg.cap),
                    done: 0,
                });
                new_tokens += prompt;
            }
            queue = queue.saturating_sub(n as u64) + (rng.f() * 2.0 * n as f64) as u64;
            let used: u64 = running.iter().map(|r| u64::from(r.prompt + r.done)).sum();
            t += f64::from(new_tokens) * 2.0e-5 * cfg.slowdown;
            write!(
                line,
                "[{} {tag}] Prefill batch, #new-seq: {n}, #new-token: {new_tokens}, #cached-token: {}, token usage: {:.2}, #running-req: {}, #queue-req: {queue}",
                stamp(t),
                (rng.f() * 512.0) as u32,
                used as f64 / cfg.kv_capacity as f64,
                running.len() - n
            )?;
            emit(&mut out, &mut line, &mut truth)?;
            truth.prefill_lines += 1;
        }
        // one decode step
        let step = (0.012 + 0.00018 * running.len() as f64) * cfg.slowdown;
        t += step;
        tokens_since_log += running.len() as u64;
        truth.generated_tokens += running.len() as u64;
        for r in running.iter_mut() {
            r.done += 1;
        }
        steps += 1;
        if steps.is_multiple_of(cfg.decode_log_interval) {
            let used: u64 = running.iter().map(|r| u64::from(r.prompt + r.done)).sum();
            let gap = t - last_log_t;
            write!(
                line,
                "[{} {tag}] Decode batch, #running-req: {}, #token: {used}, token usage: {:.2}, cuda graph: True, gen throughput (token/s): {:.2}, #queue-req: {queue}",
                stamp(t),
                running.len(),
                used as f64 / cfg.kv_capacity as f64,
                tokens_since_log as f64 / gap
            )?;
            emit(&mut out, &mut line, &mut truth)?;
            truth.decode_lines += 1;
            last_log_t = t;
            tokens_since_log = 0;
        }
        // finished requests leave; the client logs an access line for each
        let before = running.len();
        let mut capped = 0;
        running.retain(|r| {
            let done = r.done >= r.target;
            if done && r.target == cfg.cap {
                capped += 1;
            }
            !done
        });
        for _ in 0..before - running.len() {
            write!(
                line,
                "[{}] INFO:     127.0.0.1:{} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
                stamp(t),
                40000 + (rng.f() * 20000.0) as u32
            )?;
            emit(&mut out, &mut line, &mut truth)?;
            truth.access_lines += 1;
            truth.finished += 1;
        }
        truth.capped += capped;
    }
    truth.seconds = t - first_t;
    out.flush()?;
    Ok(truth)
}
