//! Scenario runs: fleets of GPUs, restarts with new settings, closed-loop clients, SGLang or
//! vLLM logs, and the completions the job wrote, each with the simulator's ground truth.
//!
//! Each GPU is simulated on its own clock through a list of phases (a phase is one server
//! start). A decode step emits one token per running request and takes
//! `(base + per_req × running) × slowdown` seconds, so throughput saturates with concurrency:
//! one more request adds less than 10% of a request's rate beyond `running = 9 base /
//! per_req`. Requests come from a standing queue (a job pushing as fast as it can) or from a
//! number of closed-loop clients that join at a given rate. Output lengths are exponential
//! (mean `mean_output`) cut at the phase's cap. Finished requests of all GPUs become the
//! job's completions in finish order, 500 records per file.
//!
//! Each start logs its phases (weights, KV cache, graphs, then ready) at fixed offsets; a
//! phase may end in a crash (SGLang's scheduler dies of CUDA out of memory, and the health
//! check times out 20 s later), and requests finishing in a phase's first seconds may fail
//! (an HTTP 500 access line instead of 200).

use crate::sim::Rng;
use anyhow::Result;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sglang,
    Vllm,
}

/// One server start.
#[derive(Debug, Clone)]
pub struct Phase {
    /// How long work keeps arriving.
    pub secs: f64,
    pub max_running: usize,
    /// The client's `max_tokens`.
    pub cap: u32,
    pub context_len: u32,
    /// Closed-loop clients; `None` is a standing queue.
    pub clients: Option<usize>,
    /// A closed-loop client's mean pause between a response and its next request, seconds
    /// (exponential; 0: none): the running count then moves about its mean.
    pub think_s: f64,
    /// Clients joining per second (0: all at once).
    pub ramp_per_s: f64,
    /// Requests finishing in the first `fail_secs` of the phase fail with `fail_rate`.
    pub fail_secs: f64,
    pub fail_rate: f64,
    /// Downtime after the phase (before the next start).
    pub gap_after: f64,
    /// Let running requests finish when work stops; otherwise the server is stopped then
    /// (running requests fail) and the next phase starts on schedule on every GPU.
    pub drain: bool,
    /// With `drain` false: the server is not stopped but dies, SGLang's scheduler logging a
    /// CUDA out-of-memory traceback.
    pub crash: bool,
    /// A decode step slows by this share over the phase, linearly (0.25: a step takes 25%
    /// longer at its end, the rate falling by a fifth): a run that drifts.
    pub slow_by: f64,
}

impl Default for Phase {
    fn default() -> Phase {
        Phase {
            secs: 600.0,
            max_running: 64,
            cap: 4096,
            context_len: 40960,
            clients: None,
            think_s: 0.0,
            ramp_per_s: 0.0,
            fail_secs: 0.0,
            fail_rate: 0.0,
            gap_after: 120.0,
            drain: true,
            crash: false,
            slow_by: 0.0,
        }
    }
}

impl Phase {
    /// `secs` of closed-loop clients, half again as many as `max_running` (a queue that
    /// never empties), the decode step slowing by `slow_by` over the phase: the steady-state
    /// cases (`xtask steady-runs`, `tests/tests/steady.rs`).
    pub fn closed_loop(secs: f64, max_running: usize, slow_by: f64) -> Phase {
        Phase {
            secs,
            max_running,
            clients: Some(max_running * 3 / 2),
            slow_by,
            ..Phase::default()
        }
    }

    /// 64 clients joining over 30 minutes, the server stopped after 20: a log that ends
    /// while the run still ramps up.
    pub fn cut_in_ramp_up() -> Phase {
        Phase {
            secs: 1200.0,
            max_running: 64,
            clients: Some(64),
            ramp_per_s: 64.0 / 1800.0,
            drain: false,
            ..Phase::default()
        }
    }
}

/// One GPU (one server process and its log).
#[derive(Debug, Clone)]
pub struct Gpu {
    pub name: String,
    pub engine: Engine,
    pub seed: u64,
    pub slowdown: f64,
    pub base: f64,
    pub per_req: f64,
    pub mean_output: f64,
    /// Start, seconds since the epoch (naive local time).
    pub start: f64,
    /// SGLang's `decode_log_interval` (decode steps per `Decode batch` line).
    pub log_every: u64,
    /// Prometheus scrapes of a vLLM server: every so many seconds, appended to one file
    /// with `# scrape <time>` lines, or one file per scrape named by its time.
    pub scrapes: Option<(f64, ScrapeFiles)>,
}

/// Where scrapes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrapeFiles {
    OneFile,
    PerScrape,
}

/// Counters and gauges a scrape shows.
#[derive(Default)]
struct Counters {
    gen: u64,
    prompt: u64,
    stop: u64,
    length: u64,
}

fn iso(secs: f64) -> String {
    stamp(Engine::Sglang, secs).replace(' ', "T")
}

fn scrape_text(t: f64, c: &Counters, running: usize, waiting: usize, kv: f64) -> String {
    let l = r#"engine="0",model_name="Qwen/Qwen3-8B""#;
    let num = |v: u64| {
        if v >= 1_000_000 {
            format!("{:e}", v as f64).replace('e', "e+0")
        } else {
            format!("{v}.0")
        }
    };
    format!(
        "# scrape {}\n# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{{l}}} {running}.0\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{{l}}} {waiting}.0\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{{{l}}} {kv}\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{{l}}} {}\n# TYPE vllm:generation_tokens_created gauge\nvllm:generation_tokens_created{{{l}}} 1.778371200e+09\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{{{l}}} {}\n# TYPE vllm:request_success_total counter\nvllm:request_success_total{{{l},finished_reason=\"abort\"}} 0.0\nvllm:request_success_total{{{l},finished_reason=\"length\"}} {}\nvllm:request_success_total{{{l},finished_reason=\"stop\"}} {}\n",
        iso(t),
        num(c.gen),
        num(c.prompt),
        num(c.length),
        num(c.stop)
    )
}

impl Gpu {
    pub fn new(name: &str, engine: Engine, seed: u64) -> Gpu {
        Gpu {
            name: name.into(),
            engine,
            seed,
            slowdown: 1.0,
            base: 0.012,
            per_req: 0.0003,
            mean_output: 1400.0,
            start: 1_778_371_200.0, // 2026-05-10 00:00:00
            log_every: 40,
            scrapes: None,
        }
    }
}

/// A finished request.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    pub t: f64,
    pub prompt: u32,
    pub output: u32,
    pub capped: bool,
    pub failed: bool,
}

/// What is true of one GPU's log.
#[derive(Debug, Clone, Default)]
pub struct Truth {
    pub tokens: u64,
    /// Tokens and busy seconds per phase.
    pub phases: Vec<(u64, f64)>,
    pub lines: u64,
    /// Requests finished (stop, length).
    pub finished: (u64, u64),
    /// HTTP access lines written: answered (200) and failed (500).
    pub http: (u64, u64),
    /// When the server died (a crash's traceback), seconds since the epoch.
    pub crashes: Vec<f64>,
}

struct Req {
    prompt: u32,
    target: u32,
    done: u32,
    capped: bool,
}

fn stamp(engine: Engine, secs: f64) -> String {
    let t = secs.floor() as i64;
    let days = t.div_euclid(86_400);
    let sod = t.rem_euclid(86_400);
    let (y, m, d) = crate::sim::civil(days);
    let (h, mi, s) = (sod / 3600, sod / 60 % 60, sod % 60);
    match engine {
        Engine::Sglang => format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}"),
        Engine::Vllm => format!("{m:02}-{d:02} {h:02}:{mi:02}:{s:02}"),
    }
}

/// A vLLM V1 periodic stats line (rates over the interval, KV usage a fraction).
fn vllm_stats(
    line: &mut String,
    t: f64,
    prompt_tps: f64,
    gen_tps: f64,
    running: usize,
    waiting: usize,
    kv: f64,
) -> std::fmt::Result {
    write!(line, "INFO {} [loggers.py:123] Engine 000: Avg prompt throughput: {prompt_tps:.1} tokens/s, Avg generation throughput: {gen_tps:.1} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: {:.1}%, Prefix cache hit rate: 0.0%", stamp(Engine::Vllm, t), kv * 100.0)
}

struct Log {
    out: std::io::BufWriter<std::fs::File>,
    line: String,
    lines: u64,
}

impl Log {
    fn emit(&mut self) -> Result<()> {
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())?;
        self.line.clear();
        self.lines += 1;
        Ok(())
    }
}

/// Simulates one GPU through its phases, writing its log to `path`.
pub fn run_gpu(gpu: &Gpu, phases: &[Phase], path: &Path) -> Result<(Truth, Vec<Done>)> {
    let mut log = Log {
        out: std::io::BufWriter::new(std::fs::File::create(path)?),
        line: String::new(),
        lines: 0,
    };
    let mut rng = Rng::new(gpu.seed);
    let mut truth = Truth::default();
    let mut done = Vec::new();
    let mut t = gpu.start;
    let e = gpu.engine;
    let kv_capacity = 1_048_576u64;
    let mut counters = Counters::default();
    let mut scrapes = String::new();
    let mut next_scrape = gpu.start;
    let scrape_dir = path
        .with_extension("")
        .with_file_name(format!("{}-metrics", gpu.name));
    let mut emit_scrape =
        |t: f64, c: &Counters, running: usize, waiting: usize, kv: f64| -> Result<()> {
            let text = scrape_text(t, c, running, waiting, kv);
            match gpu.scrapes {
                Some((_, ScrapeFiles::OneFile)) => scrapes.push_str(&text),
                Some((_, ScrapeFiles::PerScrape)) => {
                    std::fs::create_dir_all(&scrape_dir)?;
                    // one file per scrape, timed by its name only
                    let body: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
                    let name = iso(t).replace(['-', ':'], "");
                    std::fs::write(scrape_dir.join(format!("metrics-{name}.prom")), body)?;
                }
                None => {}
            }
            Ok(())
        };
    for ph in phases {
        // start-up lines
        match e {
            Engine::Sglang => {
                write!(log.line, "[{}] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, context_length={}, max_running_requests={}, decode_log_interval={})", stamp(e, t), ph.context_len, ph.max_running, gpu.log_every)?;
                log.emit()?;
                // the start-up's phases: weights 8 s, KV cache 2 s, graphs 8 s, the rest 7 s
                t += 8.0;
                write!(log.line, "[{} TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB, mem usage=15.12 GB.", stamp(e, t))?;
                log.emit()?;
                t += 2.0;
                write!(log.line, "[{} TP0] KV Cache is allocated. #tokens: {kv_capacity}, K size: 25.15 GB, V size: 25.15 GB", stamp(e, t))?;
                log.emit()?;
                t += 8.0;
                write!(log.line, "[{} TP0] Capture cuda graph end. Time elapsed: 7.92 s. mem usage=0.83 GB. avail mem=10.37 GB.", stamp(e, t))?;
                log.emit()?;
                t += 2.0;
                write!(log.line, "[{} TP0] max_total_num_tokens={kv_capacity}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={}, context_len={}, available_gpu_mem=8.90 GB", stamp(e, t), ph.max_running, ph.context_len)?;
                log.emit()?;
                t += 5.0;
                write!(
                    log.line,
                    "[{}] The server is fired up and ready to roll!",
                    stamp(e, t)
                )?;
                log.emit()?;
            }
            Engine::Vllm => {
                write!(
                    log.line,
                    "INFO {} [api_server.py:1880] vLLM API server version 0.10.1",
                    stamp(e, t)
                )?;
                log.emit()?;
                write!(log.line, "INFO {} [cli_args.py:300] non-default args: {{'model': 'Qwen/Qwen3-8B', 'max_num_seqs': {}, 'max_model_len': {}}}", stamp(e, t), ph.max_running, ph.context_len)?;
                log.emit()?;
                // the start-up's phases: weights 12 s, profiling and KV cache 18 s, graphs
                // 4 s, the rest 1 s
                t += 12.0;
                write!(log.line, "INFO {} [gpu_model_runner.py:1801] Model loading took 15.2683 GiB and 11.9 seconds", stamp(e, t))?;
                log.emit()?;
                t += 18.0;
                write!(
                    log.line,
                    "INFO {} [kv_cache_utils.py:864] GPU KV cache size: 1,048,576 tokens",
                    stamp(e, t)
                )?;
                log.emit()?;
                write!(log.line, "INFO {} [kv_cache_utils.py:868] Maximum concurrency for {} tokens per request: {:.2}x", stamp(e, t), ph.context_len, kv_capacity as f64 / f64::from(ph.context_len))?;
                log.emit()?;
                t += 4.0;
                write!(log.line, "INFO {} [gpu_model_runner.py:2086] Graph capturing finished in 4 secs, took 0.52 GiB", stamp(e, t))?;
                log.emit()?;
                t += 1.0;
                write!(log.line, "INFO:     Application startup complete.")?;
                log.emit()?;
            }
        }
        let start = t;
        let end = t + ph.secs;
        let mut running: Vec<Req> = Vec::with_capacity(ph.max_running);
        let mut queue: usize = 300;
        // closed-loop clients pausing, until when
        let mut thinking: Vec<f64> = Vec::new();
        let (mut phase_tokens, mut steps) = (0u64, 0u64);
        let (mut last_log, mut gen_since, mut prompt_since) = (t, 0u64, 0u64);
        loop {
            let accepting = t < end;
            let waiting = match ph.clients {
                _ if !accepting => 0,
                None => queue,
                Some(c) => {
                    let active = if ph.ramp_per_s > 0.0 {
                        (((t - start) * ph.ramp_per_s) as usize + 1).min(c)
                    } else {
                        c
                    };
                    thinking.retain(|&wake| wake > t);
                    active.saturating_sub(running.len() + thinking.len())
                }
            };
            if let Some((every, _)) = gpu.scrapes {
                // scrapes up to now see the state before this step
                let used: u64 = running.iter().map(|r| u64::from(r.prompt + r.done)).sum();
                while t >= next_scrape {
                    let kv = used as f64 / kv_capacity as f64;
                    emit_scrape(next_scrape, &counters, running.len(), waiting, kv)?;
                    next_scrape += every;
                }
            }
            if !accepting && (running.is_empty() || !ph.drain) {
                if ph.crash && !ph.drain && e == Engine::Sglang {
                    // the scheduler dies: its traceback, and the server going down
                    let at = stamp(e, t);
                    for line in [
                        format!("[{at} TP0] Scheduler hit an exception: Traceback (most recent call last):"),
                        "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 2418, in run_scheduler_process".into(),
                        "    scheduler.event_loop_overlap()".into(),
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free.".into(),
                        format!("[{at}] Received sigquit from a child process. It usually means the child failed."),
                        // the HTTP server's health check times out 20 s later
                        format!("[{}] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: {}. last_heartbeat time: {}", stamp(e, t + 20.0), &stamp(e, t)[11..], &stamp(e, t)[11..]),
                    ] {
                        log.line.push_str(&line);
                        log.emit()?;
                    }
                    truth.crashes.push(t);
                }
                for q in running.drain(..) {
                    done.push(Done {
                        t,
                        prompt: q.prompt,
                        output: q.done,
                        capped: false,
                        failed: true,
                    });
                }
                break;
            }
            // admit a prefill batch
            let room = ph.max_running - running.len();
            let n = match e {
                Engine::Sglang => room.min(waiting).min(1 + (rng.f() * 4.0) as usize),
                Engine::Vllm => room.min(waiting).min(16),
            };
            if n > 0 {
                let mut new_tokens = 0u32;
                for _ in 0..n {
                    let prompt = 200 + (rng.f() * 1800.0) as u32;
                    let want = (-(1.0 - rng.f()).ln() * gpu.mean_output) as u32 + 16;
                    running.push(Req {
                        prompt,
                        target: want.min(ph.cap),
                        done: 0,
                        capped: want >= ph.cap,
                    });
                    new_tokens += prompt;
                }
                if ph.clients.is_none() {
                    queue = queue.saturating_sub(n) + (rng.f() * 2.0 * n as f64) as usize;
                }
                prompt_since += u64::from(new_tokens);
                counters.prompt += u64::from(new_tokens);
                t += f64::from(new_tokens) * 2.0e-5 * gpu.slowdown;
                if e == Engine::Sglang {
                    let used: u64 = running.iter().map(|r| u64::from(r.prompt + r.done)).sum();
                    write!(log.line, "[{} TP0] Prefill batch, #new-seq: {n}, #new-token: {new_tokens}, #cached-token: {}, token usage: {:.2}, #running-req: {}, #queue-req: {}", stamp(e, t), (rng.f() * 512.0) as u32, used as f64 / kv_capacity as f64, running.len() - n, waiting - n)?;
                    log.emit()?;
                }
            }
            // one decode step
            let r = running.len();
            let drift = 1.0 + ph.slow_by * ((t - start) / ph.secs).clamp(0.0, 1.0);
            t += (gpu.base + gpu.per_req * r as f64) * gpu.slowdown * drift;
            phase_tokens += r as u64;
            gen_since += r as u64;
            counters.gen += r as u64;
            steps += 1;
            for q in running.iter_mut() {
                q.done += 1;
            }
            let used: u64 = running.iter().map(|r| u64::from(r.prompt + r.done)).sum();
            let queued = waiting.saturating_sub(n);
            match e {
                Engine::Sglang if steps % gpu.log_every == 0 => {
                    write!(log.line, "[{} TP0] Decode batch, #running-req: {r}, #token: {used}, token usage: {:.2}, cuda graph: True, gen throughput (token/s): {:.2}, #queue-req: {queued}", stamp(e, t), used as f64 / kv_capacity as f64, gen_since as f64 / (t - last_log))?;
                    log.emit()?;
                    last_log = t;
                    gen_since = 0;
                }
                Engine::Vllm if t - last_log >= 10.0 => {
                    let dt = t - last_log;
                    let kv = used as f64 / kv_capacity as f64;
                    vllm_stats(
                        &mut log.line,
                        t,
                        prompt_since as f64 / dt,
                        gen_since as f64 / dt,
                        r,
                        queued,
                        kv,
                    )?;
                    log.emit()?;
                    last_log = t;
                    gen_since = 0;
                    prompt_since = 0;
                }
                _ => {}
            }
            // finished requests leave
            let mut i = 0;
            while i < running.len() {
                if running[i].done >= running[i].target {
                    let q = running.swap_remove(i);
                    let failed = t - start < ph.fail_secs && rng.f() < ph.fail_rate;
                    if ph.think_s > 0.0 && ph.clients.is_some() {
                        thinking.push(t - (1.0 - rng.f()).ln() * ph.think_s);
                    }
                    if q.capped {
                        counters.length += 1;
                    } else {
                        counters.stop += 1;
                    }
                    done.push(Done {
                        t,
                        prompt: q.prompt,
                        output: q.done,
                        capped: q.capped,
                        failed,
                    });
                    if e == Engine::Sglang {
                        let status = if failed {
                            truth.http.1 += 1;
                            "500 Internal Server Error"
                        } else {
                            truth.http.0 += 1;
                            "200 OK"
                        };
                        write!(
                            log.line,
                            "[{}] INFO:     127.0.0.1:{} - \"POST /v1/chat/completions HTTP/1.1\" {status}",
                            stamp(e, t),
                            40000 + (rng.f() * 20000.0) as u32
                        )?;
                        log.emit()?;
                    }
                } else {
                    i += 1;
                }
            }
        }
        if e == Engine::Vllm && gen_since > 0 {
            // the last interval's line, at the next logging tick
            let dt = (t - last_log).max(10.0);
            vllm_stats(
                &mut log.line,
                last_log + dt,
                prompt_since as f64 / dt,
                gen_since as f64 / dt,
                0,
                0,
                0.0,
            )?;
            log.emit()?;
        }
        if let Some((every, _)) = gpu.scrapes {
            // the scrape after the last request finished
            let at = next_scrape.max(t);
            emit_scrape(at, &counters, 0, 0, 0.0)?;
            next_scrape = at + every;
        }
        truth.tokens += phase_tokens;
        truth.phases.push((phase_tokens, t - start));
        t = if ph.drain { t } else { t.max(end) } + ph.gap_after;
    }
    log.out.flush()?;
    truth.lines = log.lines;
    if matches!(gpu.scrapes, Some((_, ScrapeFiles::OneFile))) {
        std::fs::write(
            path.with_file_name(format!("{}-metrics.prom", gpu.name)),
            scrapes,
        )?;
    }
    truth.finished = (counters.stop, counters.length);
    Ok((truth, done))
}

/// Writes the job's completions (pipeline records) in 500-record files, in finish order.
/// Returns (records, capped, failed).
pub fn write_completions(dir: &Path, mut done: Vec<Done>) -> Result<(u64, u64, u64)> {
    std::fs::create_dir_all(dir)?;
    done.sort_by(|a, b| a.t.total_cmp(&b.t));
    let (mut capped, mut failed) = (0, 0);
    for (k, part) in done.chunks(500).enumerate() {
        let mut s = String::new();
        for (j, d) in part.iter().enumerate() {
            let i = k * 500 + j;
            if d.failed {
                failed += 1;
                writeln!(
                    s,
                    r#"{{"idx": {i}, "error": {{"message": "Connection reset by peer", "type": "APIConnectionError"}}}}"#
                )?;
            } else {
                capped += u64::from(d.capped);
                let finish = if d.capped { "length" } else { "stop" };
                writeln!(
                    s,
                    r#"{{"idx": {i}, "reasoning": "…", "content": "The answer is {i}.", "finish_reason": "{finish}", "usage": {{"prompt_tokens": {}, "completion_tokens": {}, "total_tokens": {}}}}}"#,
                    d.prompt,
                    d.output,
                    d.prompt + d.output
                )?;
            }
        }
        std::fs::write(dir.join(format!("batch_{k:03}.jsonl")), s)?;
    }
    Ok((done.len() as u64, capped, failed))
}

/// Runs `gpus` through `phases`, writing `dir/<gpu>.log` and, when `completions`, the job's
/// records under `dir/completions/`; returns the truth file's text.
pub fn write_run(
    dir: &Path,
    gpus: &[(Gpu, Vec<Phase>)],
    completions: bool,
    note: &str,
) -> Result<String> {
    std::fs::create_dir_all(dir)?;
    let mut text = format!(
        "# {note}\n# written by `cargo run -p xtask -- runs` (the simulator's ground truth)\n"
    );
    let mut all = Vec::new();
    let mut total = 0u64;
    for (gpu, phases) in gpus {
        let (truth, done) = run_gpu(gpu, phases, &dir.join(format!("{}.log", gpu.name)))?;
        let phases: Vec<String> = truth
            .phases
            .iter()
            .map(|(tok, secs)| {
                format!(
                    "{tok} tokens in {secs:.0} s ({:.1} tok/s)",
                    *tok as f64 / secs
                )
            })
            .collect();
        write!(
            text,
            "{}: {} tokens, {} lines; phases: {}",
            gpu.name,
            truth.tokens,
            truth.lines,
            phases.join("; ")
        )?;
        if truth.http != (0, 0) {
            write!(
                text,
                "; http: {} answered, {} failed (500)",
                truth.http.0, truth.http.1
            )?;
        }
        for t in &truth.crashes {
            write!(text, "; crashed at {}", iso(*t))?;
        }
        writeln!(text)?;
        if gpu.scrapes.is_some() {
            let (stop, length) = truth.finished;
            writeln!(text, "finished: {stop} stop, {length} length")?;
        }
        total += truth.tokens;
        all.extend(done);
    }
    writeln!(text, "total tokens: {total}")?;
    if completions {
        let (n, capped, failed) = write_completions(&dir.join("completions"), all)?;
        writeln!(
            text,
            "completions: {n} records, {capped} capped, {failed} failed"
        )?;
    }
    Ok(text)
}
