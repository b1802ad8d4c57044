//! A first summary of server logs, per instance: time span, throughput, load and pressure.
//!
//! Aggregates are built per chunk on all cores and merged in file order, so the report
//! costs one parallel pass over the bytes. Means here are means over stats lines; the
//! time-weighted token estimates and steady-state analysis belong to the timeline stage.

use crate::ingest::census::Census;
use crate::ingest::digest::Digest;
use crate::ingest::responses::{access_kind, Class};
use crate::ingest::scan::{instance_rank, Access, FileCtx, Stats, Visit, Visitor};
use crate::ingest::series::Series;
use std::collections::BTreeMap;
use tokstat_parsers::bench_console::Block;
use tokstat_parsers::loadgen::Run;
use tokstat_parsers::record::{Body, Engine, EventKind, GaugeSet, Gauges, StepKind};
use tokstat_parsers::sglang::Keep;
use tokstat_parsers::stamp::Ts;

/// Running sum / count / max of one quantity.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stat {
    pub n: u64,
    pub sum: f64,
    /// Minus infinity before the first value (so that each value is one comparison).
    max: f64,
}

impl Default for Stat {
    fn default() -> Stat {
        Stat {
            n: 0,
            sum: 0.0,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Stat {
    #[inline]
    fn add(&mut self, v: f64) {
        if v.is_finite() {
            if v > self.max {
                self.max = v;
            }
            self.n += 1;
            self.sum += v;
        }
    }
    fn merge(&mut self, o: &Stat) {
        if o.n > 0 {
            if o.max > self.max {
                self.max = o.max;
            }
            self.n += o.n;
            self.sum += o.sum;
        }
    }
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }
}

/// What is known of one instance.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Instance {
    pub engine: Option<Engine>,
    pub first: Option<Ts>,
    pub last: Option<Ts>,
    /// Decode (SGLang) or periodic stats (vLLM) lines.
    pub stat_lines: u64,
    pub prefill_lines: u64,
    pub gen_tps: Stat,
    pub prompt_tps: Stat,
    pub running: Stat,
    pub waiting: Stat,
    pub kv_usage: Stat,
    pub accept_len: Stat,
    pub retracted: u64,
    pub retraction_events: u64,
    pub preemptions: u64,
    /// Error lines: those of kind `error` and `oom`, and every kind that says something
    /// broke ([`EventKind::broke`]).
    pub errors: u64,
    pub prefill_tokens: u64,
    /// Its event lines by kind.
    pub census: Census,
    /// The stamped lines summed, for the timeline and the analyses built on it.
    pub digest: Digest,
}

impl Instance {
    /// Adds a chunk's aggregates (its series is summed apart: see [`Logs::absorb`]).
    fn merge(&mut self, o: &Instance) {
        // (the stamp of the lines before `o`'s)
        let before = self.last.map(|t| t.0);
        self.engine = self.engine.or(o.engine);
        self.first = match (self.first, o.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last = match (self.last, o.last) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.stat_lines += o.stat_lines;
        self.prefill_lines += o.prefill_lines;
        self.gen_tps.merge(&o.gen_tps);
        self.prompt_tps.merge(&o.prompt_tps);
        self.running.merge(&o.running);
        self.waiting.merge(&o.waiting);
        self.kv_usage.merge(&o.kv_usage);
        self.accept_len.merge(&o.accept_len);
        self.retracted += o.retracted;
        self.retraction_events += o.retraction_events;
        self.preemptions += o.preemptions;
        self.errors += o.errors;
        self.prefill_tokens += o.prefill_tokens;
        self.census.merge(&o.census, before);
    }

    /// Seconds between the first and last stamped record.
    pub fn span_s(&self) -> Option<f64> {
        Some((self.last?.0 - self.first?.0) as f64 / 1000.0)
    }
}

/// What the server logs of all files told, per instance (keyed by instance name).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Logs {
    pub instances: BTreeMap<String, Instance>,
    /// The timeline bucket asked for, ms (the digests' cells are made of it).
    pub bucket: Option<i64>,
    /// The file read last.
    #[serde(skip)]
    file: Option<String>,
    /// Serving benchmark summaries read in the file under way, in order: the header's line
    /// number, and the run (taken as each file ends: see `ingest::read_with`).
    #[serde(skip)]
    pub consoles: Vec<(u64, Run)>,
}

/// Receives each chunk's stats lines of an instance (its name and engine) once summed into
/// its digest: `export` writes them as its `steps` table, while nothing else keeps them
/// (they are handed over, not copied).
pub type StepsSink<'a> = dyn FnMut(&str, Option<&'static str>, Series) + 'a;

impl Logs {
    /// Adds the instances of a chunk of `file` (read after everything added before), whose
    /// line numbers leave out the `before` lines of the file before it, and hands each
    /// one's lines to `steps`.
    pub fn absorb(
        &mut self,
        file: &FileCtx,
        chunk: ChunkSummary,
        before: u64,
        steps: Option<&mut StepsSink<'_>>,
    ) {
        let mut steps = steps;
        if self.file.as_deref() != Some(file.source.as_str()) {
            self.file = Some(file.source.clone());
            for i in self.instances.values_mut() {
                i.digest.new_file();
            }
        }
        self.consoles.extend(
            chunk
                .consoles
                .into_iter()
                .map(|(line, run)| (line + before, run)),
        );
        for (rank, mut inst, mut series) in chunk.ranks {
            inst.census.shift_lines(before);
            let bucket = self.bucket;
            let name = file.instance_of(rank);
            let at = self
                .instances
                .entry(name.to_string())
                .or_insert_with(|| Instance {
                    digest: Digest::new(bucket),
                    ..Instance::default()
                });
            at.merge(&inst);
            at.digest.push(&mut series);
            if let Some(f) = steps.as_deref_mut() {
                f(&name, at.engine.map(Engine::as_str), series);
            }
        }
    }

    /// Adds the instances of another read (a saved one: see [`crate::ingest::saved`]), as if
    /// its files came after those read before: an instance of both has its aggregates summed
    /// and its digest's runs joined as a later file's are.
    pub fn extend(&mut self, other: Logs) {
        for (name, mut inst) in other.instances {
            match self.instances.get_mut(&name) {
                Some(at) => {
                    at.merge(&inst);
                    at.digest.extend(std::mem::take(&mut inst.digest));
                }
                None => {
                    self.instances.insert(name, inst);
                }
            }
        }
    }
}

/// The instances of one chunk, keyed by rank: a chunk belongs to one file, so the rank alone
/// names the instance, and no string is built or compared per line.
#[derive(Debug, Clone, Default)]
pub struct ChunkSummary {
    /// Each rank's aggregates, and its stamped lines (on their way into its digest).
    ranks: Vec<(Option<u32>, Instance, Series)>,
    /// Points and prefill stamps to make room for in the first instance (see
    /// [`ChunkSummary::sized_like`]).
    room: (usize, usize),
    /// Serving benchmark summaries: their header's line number, and the run they hold.
    consoles: Vec<(u64, Run)>,
}

impl ChunkSummary {
    /// A summary that makes room at once for the points and prefill stamps of the first
    /// instance of `last`, the chunk this thread read before (and a little more): chunks of
    /// one log hold much the same lines, and a chunk's series grown by doubling copied each
    /// of its rows twice on the way.
    pub fn sized_like(last: (usize, usize)) -> ChunkSummary {
        ChunkSummary {
            ranks: Vec::new(),
            room: (last.0 + last.0 / 8, last.1 + last.1 / 8),
            consoles: Vec::new(),
        }
    }

    /// How many points and prefill stamps its first instance holds.
    pub fn size(&self) -> (usize, usize) {
        self.ranks
            .first()
            .map_or((0, 0), |(_, _, s)| (s.points.len(), s.prefill.len()))
    }

    /// The instance of a rank in this chunk: the first one's without a search (a chunk
    /// of one file mostly holds one rank), the others found or added out of line.
    #[inline]
    fn instance(&mut self, rank: Option<u32>) -> (&mut Instance, &mut Series) {
        let idx = match self.ranks.first() {
            Some((r, _, _)) if *r == rank => 0,
            _ => self.place(rank),
        };
        let (_, i, s) = &mut self.ranks[idx];
        (i, s)
    }

    /// Where a rank's instance is, added if new.
    #[cold]
    fn place(&mut self, rank: Option<u32>) -> usize {
        if let Some(i) = self.ranks.iter().position(|(r, _, _)| *r == rank) {
            return i;
        }
        let mut series = Series::default();
        if self.ranks.is_empty() {
            series.points.reserve(self.room.0);
            series.prefill.reserve(self.room.1);
        }
        self.ranks.push((rank, Instance::default(), series));
        self.ranks.len() - 1
    }
}

impl Instance {
    fn stamp(&mut self, ts: Option<Ts>) {
        if let Some(ts) = ts {
            self.first = Some(self.first.map_or(ts, |f| f.min(ts)));
            self.last = Some(self.last.map_or(ts, |l| l.max(ts)));
        }
    }

    /// Adds a stats line: the one path of whole steps and quickly read ones.
    #[inline(always)]
    fn step(
        &mut self,
        series: &mut Series,
        ts: Option<Ts>,
        engine: Option<Engine>,
        kind: StepKind,
        g: &Gauges,
    ) {
        self.stamp(ts);
        if let Some(ts) = ts {
            series.step(ts, kind, g);
        }
        self.engine = self.engine.or(engine);
        match kind {
            StepKind::Decode | StepKind::Stats => {
                self.stat_lines += 1;
                if let Some(g) = g.gen_tps {
                    self.gen_tps.add(g);
                }
                if let Some(p) = g.prompt_tps {
                    self.prompt_tps.add(p);
                }
                if let Some(r) = g.running {
                    self.running.add(r as f64);
                }
                if let Some(w) = g.waiting {
                    self.waiting.add(w as f64);
                }
                if let Some(k) = g.kv_usage {
                    self.kv_usage.add(k);
                }
                if let Some(a) = g.accept_len {
                    self.accept_len.add(a);
                }
                self.preemptions += g.preemptions.unwrap_or(0);
            }
            StepKind::Prefill => {
                self.prefill_lines += 1;
                self.prefill_tokens += g.new_tokens.unwrap_or(0);
            }
            StepKind::Spec => {
                if let Some(a) = g.accept_len {
                    self.accept_len.add(a);
                }
            }
            // the periodic stats lines beside them are what the figures read
            StepKind::Cache | StepKind::Iteration => {}
        }
    }
}

impl Visitor for ChunkSummary {
    const QUICK: bool = true;
    /// A prefill batch adds its new tokens only (see `Instance::step`).
    const KEEP: Keep = Keep::new(GaugeSet::ALL, GaugeSet::NEW_TOKENS);

    fn line(&mut self, v: Visit<'_, '_>) {
        let (inst, series) = self.instance(instance_rank(v.line));
        match &v.line.body {
            Body::Step(s) => match s.kind {
                Some(kind) => inst.step(series, v.ts, s.engine, kind, &s.gauges()),
                None => {
                    inst.stamp(v.ts);
                    inst.engine = inst.engine.or(s.engine);
                }
            },
            body => {
                inst.stamp(v.ts);
                series.visit(v.ts, body);
                if let Body::Event(e) = body {
                    let ts = v.ts.or(inst.last).map(|t| t.0);
                    inst.census
                        .note(e.kind, &v.file.source, v.line_no, ts, e.message);
                    match e.kind {
                        EventKind::Retraction => {
                            inst.retraction_events += 1;
                            inst.retracted += e.count.unwrap_or(0);
                        }
                        EventKind::Preemption => inst.preemptions += 1,
                        EventKind::Error | EventKind::Oom => inst.errors += 1,
                        k if k.broke() => inst.errors += 1,
                        _ => {}
                    }
                }
            }
        }
    }

    fn stats(&mut self, s: Stats<'_>) {
        let (inst, series) = self.instance(s.dp);
        inst.step(series, s.ts, Some(Engine::Sglang), s.kind, s.gauges);
    }

    fn access(&mut self, a: Access<'_>) {
        // (an access line has no rank: it is the HTTP server's, the file's own instance)
        let (inst, _) = self.instance(None);
        let kind = access_kind(a.status);
        let ts = a.ts.or(inst.last).map(|t| t.0);
        inst.census.note(
            kind,
            &a.file.source,
            a.line_no,
            ts,
            a.msg.trim_start_matches("INFO:").trim_start(),
        );
        inst.census.responses.add(ts, Class::of(a.status), 1);
    }

    fn answered(&mut self, stamped: &[(i64, u32)]) {
        // (the file's own instance, as for `access`)
        let (inst, _) = self.instance(None);
        inst.census.responses.add_answered(stamped);
    }

    fn console(&mut self, file: &FileCtx, line_no: u64, block: Block) {
        let mut run = block.run;
        // (vLLM's summary names no backend: the file's name does)
        if run.name.is_empty() {
            run.name = file.stem.clone();
        }
        self.consoles.push((line_no, run));
    }

    fn answered_unstamped(&mut self, n: u32) {
        let (inst, _) = self.instance(None);
        let ts = inst.last.map(|t| t.0);
        inst.census.responses.add(ts, Class::Ok, u64::from(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::scan::{visit_chunk, ChunkOut, FileCtx};
    use tokstat_parsers::scan::Chunk;
    use tokstat_parsers::stamp::Calendar;

    /// The summary built from whole lines only.
    #[derive(Default)]
    struct Whole(ChunkSummary);

    impl Visitor for Whole {
        fn line(&mut self, v: Visit<'_, '_>) {
            self.0.line(v)
        }
        fn access(&mut self, a: Access<'_>) {
            self.0.access(a)
        }
        fn answered(&mut self, stamped: &[(i64, u32)]) {
            self.0.answered(stamped)
        }
        fn answered_unstamped(&mut self, n: u32) {
            self.0.answered_unstamped(n)
        }
        fn console(&mut self, file: &FileCtx, line_no: u64, block: Block) {
            self.0.console(file, line_no, block)
        }
    }

    /// The report reads SGLang stats lines quickly: for every fixture log and run, the
    /// chunk's summary and line accounting are those of whole lines.
    #[test]
    fn quick_lines_summarise_like_whole_ones() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");
        let mut files = Vec::new();
        for dir in ["formats/sglang", "formats/vllm", "formats/messy", "runs"] {
            let mut stack = vec![std::path::PathBuf::from(format!("{root}/{dir}"))];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|x| x == "log") {
                        files.push(p);
                    }
                }
            }
        }
        let file = FileCtx {
            source: "x.log".into(),
            stem: "x".into(),
        };
        let mut stat_lines = 0;
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            let chunk = || Chunk {
                bytes: &bytes,
                first_line: 0,
                calendar: Calendar::new(2026, 20_000),
            };
            let (ChunkOut { tally, out }, cal) =
                visit_chunk(&file, chunk(), ChunkSummary::default());
            let (ChunkOut { tally: t2, out: o2 }, c2) =
                visit_chunk(&file, chunk(), Whole::default());
            assert_eq!((tally, cal), (t2, c2), "{path:?}");
            // by their text: points hold NaN for absent values
            assert_eq!(
                format!("{:?}", out.ranks),
                format!("{:?}", o2.0.ranks),
                "{path:?}"
            );
            // a summary sized like the chunk before reads the same, in the room it made
            let (ChunkOut { out: o3, .. }, _) =
                visit_chunk(&file, chunk(), ChunkSummary::sized_like(out.size()));
            assert_eq!(format!("{:?}", o3.ranks), format!("{:?}", out.ranks));
            if let Some((_, _, s)) = o3.ranks.first() {
                assert!(s.points.capacity() >= out.size().0, "{path:?}");
                assert!(s.prefill.capacity() >= out.size().1, "{path:?}");
            }
            stat_lines += out.ranks.iter().map(|r| r.1.stat_lines).sum::<u64>();
        }
        assert!(
            files.len() >= 10 && stat_lines > 1000,
            "{} files",
            files.len()
        );
    }
}
