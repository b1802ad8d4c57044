//! SGLang scheduler and server messages (docs/formats.md §1), from 0.1.14 to 0.5.23.
//!
//! Stats lines are read as `key: value` pairs by name, so the ordering changes, optional
//! parts, trailing `", "`, the `.` / `,` / ` [N],` label separators and the pool variants
//! (`#token`, `#full token`, `#gpu token`, SWA, Mamba, HiSparse) all go through one path.

use crate::kv::pairs;
use crate::num::{float, percent_as_fraction, pybool, uint, Plain};
use crate::record::{
    Body, Config, Engine, Event, EventKind, Extra, GaugeSet, Gauges, Shape, Step, StepKind,
};

const SG: Option<Engine> = Some(Engine::Sglang);

/// Parses an SGLang message (the line after its prefix). `None`: not an SGLang message.
pub fn parse(msg: &str) -> Option<Body<'_>> {
    let mut out = Body::Other;
    parse_into(msg, &mut out).then_some(out)
}

/// [`parse`] into `out`, where the stats lines are built in place (a step is a few hundred
/// bytes: returning it through an `Option` copies it); false when not an SGLang message.
#[inline]
pub(crate) fn parse_into<'a>(msg: &'a str, out: &mut Body<'a>) -> bool {
    may_be_message(msg) && parse_message(msg, out)
}

/// False when `msg` is no decode or prefill batch, by its first byte: the first test of
/// [`quick_gauges_in`], which a caller makes before it sets up gauges (most lines, access
/// lines, go no further).
#[inline]
pub(crate) fn may_be_batch(msg: &str) -> bool {
    matches!(msg.as_bytes().first(), Some(b'D' | b'P'))
}

/// False when `msg` is no SGLang message [`parse`] reads, by its first byte: those of the
/// batch labels and of the arms of `other`. The rest (access lines, most of a log's other
/// lines) are told apart where they stand.
#[inline]
pub(crate) fn may_be_message(msg: &str) -> bool {
    matches!(
        msg.as_bytes().first(),
        Some(b'D' | b'P' | b'#' | b'n' | b'd' | b'K' | b'T' | b'm' | b's' | b'S' | b'L' | b'C')
    )
}

/// [`parse_into`] past its first byte.
fn parse_message<'a>(msg: &'a str, out: &mut Body<'a>) -> bool {
    let batch_of = match msg.as_bytes().first() {
        Some(b'D') => msg
            .strip_prefix("Decode batch")
            .map(|r| (r, StepKind::Decode)),
        Some(b'P') => msg
            .strip_prefix("Prefill batch")
            .map(|r| (r, StepKind::Prefill)),
        _ => None,
    };
    if let Some((rest, kind)) = batch_of {
        batch(rest, kind, out);
        return true;
    }
    match other(msg) {
        Some(b) => {
            *out = b;
            true
        }
        None => false,
    }
}

/// The messages other than decode and prefill batches.
fn other(msg: &str) -> Option<Body<'_>> {
    let first = *msg.as_bytes().first()?;
    match first {
        b'D' => {
            if msg.starts_with("Decode out of memory happened") {
                return Some(retraction(msg));
            }
            if msg.starts_with("Decode out of memory") {
                return Some(event(EventKind::Oom, msg, None));
            }
        }
        b'P' if msg.starts_with("Prefill out of memory") => {
            return Some(event(EventKind::Oom, msg, None));
        }
        b'#' if msg.starts_with("#running-req: ") => {
            // 0.1.14–0.1.16 decode line with no label
            let mut out = Body::Other;
            fields(msg, StepKind::Decode, None, &mut out);
            return Some(out);
        }
        b'n' if msg.starts_with("new fill batch") => return Some(new_fill_batch(msg)),
        b'd' if msg.starts_with("decode out of memory happened") => return Some(retraction(msg)),
        b'K' => {
            if msg.starts_with("KV cache pool is full") {
                return Some(retraction(msg));
            }
            // memory_pool.py `f"{cache_name} {'VA upper bound' if … else 'is allocated'}. …"`
            // (0.5.17+; `KV Cache is allocated. …` before)
            if let Some(rest) = msg
                .strip_prefix("KV Cache is allocated.")
                .or_else(|| msg.strip_prefix("KV Cache VA upper bound."))
            {
                return Some(kv_allocated(rest));
            }
        }
        b'T' => {
            if msg.starts_with("Testing retraction") {
                return Some(retraction(msg));
            }
            if msg.starts_with("Traceback (most recent call last)") {
                return Some(event(EventKind::Traceback, msg, None));
            }
            if msg.starts_with("The server is fired up") {
                return Some(event(EventKind::ServerReady, msg, None));
            }
        }
        b'm' if msg.starts_with("max_total_num_token") => {
            // 0.1.x singular names end with a trailing ", "
            let body = msg.trim_end_matches([',', ' ']);
            return Some(Body::Config(Config::new(Engine::Sglang, &[], Some(body))));
        }
        b's' => {
            if let Some(rest) = msg.strip_prefix("server_args=") {
                return Some(server_args(rest));
            }
        }
        b'S' if msg.starts_with("Scheduler hit an exception") => {
            return Some(event(EventKind::Crash, msg, None));
        }
        // model_runner.py `f"Capture cuda graph end. Time elapsed: {…:.2f} s"` (0.4.0; `. mem
        // usage=… GB. avail mem=… GB.` after it from 0.4.6), `f"Capture {'cpu graph' if … else
        // 'cuda graph'} end. …"` (0.5.3), `f"Capture piecewise CUDA graph end. …"` (0.5.9),
        // cuda_graph_setup.py `f"Capture {capture_name} CUDA graph end. elapsed=…"` (0.5.23);
        // the speculative drafts' `Capture draft cuda graph end. …` (0.5.3+)
        b'C' if msg.starts_with("Capture ") && msg.contains(" graph end.") => {
            return Some(event(EventKind::GraphsCaptured, msg, None));
        }
        b'L' => {
            if let Some(rest) = msg.strip_prefix("Load weight end. ") {
                return Some(load_weight(rest));
            }
        }
        _ => {}
    }
    None
}

fn event(kind: EventKind, message: &str, count: Option<u64>) -> Body<'_> {
    Body::Event(Event {
        engine: SG,
        kind,
        message,
        count,
    })
}

/// `Decode batch. …`, `Decode batch, …`, `Decode batch [440], …`,
/// `Prefill batch(mixed #running-req: 5). …`.
fn batch<'a>(rest: &'a str, kind: StepKind, out: &mut Body<'a>) {
    let mut rest = rest;
    let mut mixed_running = None;
    if let Some(r) = rest.strip_prefix("(mixed #running-req: ") {
        let Some(close) = r.find(')') else {
            *out = Body::Malformed("unclosed `(mixed …)`");
            return;
        };
        mixed_running = uint(&r[..close]);
        rest = &r[close + 1..];
    }
    if let Some(r) = rest.strip_prefix(" [") {
        let Some(close) = r.find(']') else {
            *out = Body::Malformed("unclosed `[N]` iteration count");
            return;
        };
        rest = &r[close + 1..];
    }
    match rest.as_bytes() {
        [b'.' | b',', b' ', ..] => fields(&rest[2..], kind, mixed_running, out),
        _ => *out = Body::Malformed("no `.` or `,` after the batch label"),
    }
}

/// Reads the `key: value` parts of a decode or prefill body; `running` is the count a
/// `(mixed #running-req: N)` label gave, used when the body has none. The step is built in
/// place: it is a few hundred bytes, and copies of it were a tenth of a log's reading time.
fn fields<'a>(body: &'a str, kind: StepKind, running: Option<u64>, out: &mut Body<'a>) {
    let body = body.trim_end_matches([',', ' ']);
    let fresh = || Step {
        extra: Extra::new(body, Shape::Keyed, extra),
        engine: SG,
        kind: Some(kind),
        ..Step::default()
    };
    *out = Body::Step(fresh());
    let Body::Step(s) = out else {
        return;
    };
    let slot = usize::from(kind != StepKind::Decode);
    // consecutive lines of a log share their key layout: try the last one first
    if !LAYOUTS.with(|l| l.borrow()[slot].read(body, s)) {
        // a line cut short keeps the fields before its cut part, marked partial: looked for
        // first, as a cut part would otherwise continue the value before it (silently, when
        // that value is an unmodelled pair's text)
        if let Some(short) =
            crate::kv::cut_tail(body).filter(|short| crate::kv::cut_tail(short).is_none())
        {
            fields(short, kind, running, out);
            if let Body::Step(s) = out {
                s.partial = true;
            }
            return;
        }
        // the cached layout may have filled some fields before it failed
        *s = fresh();
        for (key, value) in pairs(body) {
            if let Err(why) = apply(s, key, value) {
                *out = Body::Malformed(why);
                return;
            }
        }
        LAYOUTS.with(|l| l.borrow_mut()[slot] = Layout::of(body, kind));
    }
    if s.running.is_none() {
        s.running = running;
    }
    let complete = match kind {
        StepKind::Decode => s.running.is_some(),
        _ => s.new_seq.is_some() || s.new_tokens.is_some(),
    };
    if !complete {
        *out = Body::Malformed("a required field is missing (`#running-req` / `#new-seq`)");
    }
}

/// The gauges of a `Decode batch` / `Prefill batch` message with a `.` or `,` after its label,
/// read into `g` against the cached layout: when it gives a kind, [`parse`] gives a step of
/// that kind whose [`Step::gauges`] are `g`. `None` when only the general reading can tell
/// (another label, a layout not seen last, a value that is not a plain number, a missing
/// required field). This is the report's reading of a stats line: a step is a few hundred
/// bytes to set up, most of which no aggregate reads.
pub fn quick_gauges(msg: &str, g: &mut Gauges) -> Option<StepKind> {
    quick_gauges_in(msg, g, false, Keep::ALL)
}

/// [`quick_gauges`] keeping only the gauges of `keep` (the others stay `None`).
pub fn quick_gauges_kept(msg: &str, g: &mut Gauges, keep: Keep) -> Option<StepKind> {
    quick_gauges_in(msg, g, false, keep)
}

/// [`quick_gauges_kept`] for a message whose line was not searched for colour codes: answers
/// only when no key of the layout holds a `[`, so that the message holds none either (every
/// spelling of a colour code has one).
pub(crate) fn quick_raw_gauges(msg: &str, g: &mut Gauges, keep: Keep) -> Option<StepKind> {
    quick_gauges_in(msg, g, true, keep)
}

/// Which gauges a quick reading keeps, for decode and for prefill batches. The values of the
/// others are still checked — a line reads quickly exactly when it would read whole, with the
/// same values — but not converted or stored: a report reads a prefill batch's new tokens
/// only, and converting its five other numbers was a sixth of the time spent on the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// Per slot (decode, prefill): bit `f as u32` for each [`Field`] kept.
    fields: [u32; 2],
}

impl Keep {
    pub const ALL: Keep = Keep::new(GaugeSet::ALL, GaugeSet::ALL);

    pub const fn new(decode: GaugeSet, prefill: GaugeSet) -> Keep {
        Keep {
            fields: [Keep::fields_of(decode), Keep::fields_of(prefill)],
        }
    }

    const fn fields_of(g: GaugeSet) -> u32 {
        let pairs = [
            (GaugeSet::RUNNING, Field::Running),
            (GaugeSet::WAITING, Field::Waiting),
            (GaugeSet::GEN_TPS, Field::GenTps),
            (GaugeSet::PROMPT_TPS, Field::PromptTps),
            (GaugeSet::KV_USAGE, Field::KvUsage),
            (GaugeSet::ACCEPT_LEN, Field::AcceptLen),
            (GaugeSet::NEW_SEQ, Field::NewSeq),
            (GaugeSet::NEW_TOKENS, Field::NewTokens),
        ];
        let mut bits = 0;
        let mut i = 0;
        while i < pairs.len() {
            if g.has(pairs[i].0) {
                bits |= 1 << pairs[i].1 as u32;
            }
            i += 1;
        }
        bits
    }
}

#[inline]
fn quick_gauges_in(msg: &str, g: &mut Gauges, raw: bool, keep: Keep) -> Option<StepKind> {
    // by the first byte: most other lines (access lines) go no further
    let b = msg.as_bytes();
    let (kind, head, label) = match b.first() {
        Some(b'D') => (StepKind::Decode, b"Decode b", 12),
        Some(b'P') => (StepKind::Prefill, b"Prefill ", 13),
        _ => return None,
    };
    // the label and its `. ` or `, ` compared as two words (`memcmp` calls cost more): the
    // first eight bytes, and the eight ending after the separator, whose `.` and `,` differ
    // in one bit only
    let word = |at: usize| Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?));
    const COMMA_OR_DOT: u64 = ((b'.' ^ b',') as u64) << 48;
    if word(0)? != u64::from_le_bytes(*head)
        || word(label - 6)? | COMMA_OR_DOT != u64::from_le_bytes(*b" batch. ")
    {
        return None;
    }
    let rest = &msg[label + 2..];
    let body = match rest.as_bytes().last() {
        Some(b',' | b' ') => rest.trim_end_matches([',', ' ']),
        _ => rest,
    };
    *g = Gauges::default();
    let slot = usize::from(kind != StepKind::Decode);
    LAYOUTS.with(|l| {
        let l = &l.borrow()[slot];
        let mut sink = Kept {
            g,
            fields: keep.fields[slot],
        };
        // a read layout stored every value it names: complete when it names what a step of
        // its kind requires
        ((!raw || l.bracket_free) && l.read(body, &mut sink) && l.complete).then_some(kind)
    })
}

thread_local! {
    /// The key layout of the last decode and prefill body this thread read.
    static LAYOUTS: std::cell::RefCell<[Layout; 2]> = std::cell::RefCell::new([Layout::default(), Layout::default()]);
}

/// The keys of a stats body in order, with the column each maps to.
///
/// A log repeats one layout for hours, so the next body is first read against the last one:
/// each key is compared where it is expected (still by name: a line with other keys, or keys
/// in another order, does not match) and the value runs to the next `", "`. This skips the
/// separator search over the key text and the lookup of each key in the field table; any
/// difference falls back to the general reading, which then records the new layout.
#[derive(Debug, Default)]
struct Layout {
    /// The text around each value: its key with the `", "` before it (but the first) and
    /// the `": "` after it, compared in one piece.
    slots: Vec<(Key, Option<Field>)>,
    /// No key holds a `[`: a body read against this layout holds none.
    bracket_free: bool,
    /// It names what a step of its kind requires: `#running-req` (decode), `#new-seq` or
    /// `#new-token` (prefill).
    complete: bool,
}

/// A key text, with its first 16 bytes (zero-padded) and its last 16: a key of up to 32
/// bytes (all but the MFU estimates) is compared in one or two vector compares instead of a
/// `memcmp` call of varying length; longer ones by their text.
#[derive(Debug, Clone)]
struct Key {
    head: [u8; 16],
    tail: [u8; 16],
    len: usize,
    text: Box<[u8]>,
}

impl Key {
    fn of(k: &[u8]) -> Key {
        let mut key = Key {
            head: [0; 16],
            tail: [0; 16],
            len: k.len(),
            text: k.into(),
        };
        let n = k.len().min(16);
        key.head[..n].copy_from_slice(&k[..n]);
        if k.len() > 16 {
            key.tail.copy_from_slice(&k[k.len() - 16..]);
        }
        key
    }

    /// Whether `b[at..]` starts with this key.
    #[inline]
    fn at(&self, b: &[u8], at: usize) -> bool {
        let Some(head) = b.get(at..at + 16).filter(|_| self.len <= 32) else {
            return b.get(at..).is_some_and(|r| r.starts_with(&self.text));
        };
        let eq_head = eq16(head.try_into().unwrap_or(&[0; 16]), &self.head);
        if self.len <= 16 {
            let need = (1u32 << self.len) - 1;
            return eq_head & need == need;
        }
        match b.get(at + self.len - 16..at + self.len) {
            Some(tail) => {
                eq_head == 0xffff && eq16(tail.try_into().unwrap_or(&[0; 16]), &self.tail) == 0xffff
            }
            None => false,
        }
    }
}

/// Bit `k`: `a[k] == b[k]`.
#[inline]
fn eq16(a: &[u8; 16], b: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; each load reads the 16 bytes of its array
        unsafe {
            let x = _mm_loadu_si128(a.as_ptr().cast());
            let y = _mm_loadu_si128(b.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) as u32 & 0xffff
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (0..16).fold(0, |m, k| m | (u32::from(a[k] == b[k]) << k))
    }
}

impl Layout {
    /// The layout of a `kind` body, or an empty one if a value spans several parts.
    fn of(body: &str, kind: StepKind) -> Layout {
        let mut l = Layout::default();
        for (k, v) in pairs(body) {
            if k.is_empty() || v.contains(", ") {
                return Layout::default();
            }
            let sep = if l.slots.is_empty() { "" } else { ", " };
            let text = format!("{sep}{k}: ");
            l.slots.push((Key::of(text.as_bytes()), field(k)));
        }
        l.bracket_free = l.slots.iter().all(|(key, _)| !key.text.contains(&b'['));
        let names = |f: &[Field]| {
            l.slots
                .iter()
                .any(|(_, g)| g.is_some_and(|g| f.contains(&g)))
        };
        l.complete = if kind == StepKind::Decode {
            names(&[Field::Running])
        } else {
            names(&[Field::NewSeq, Field::NewTokens])
        };
        l
    }

    /// Reads `body` if it has this layout and every value reads; false leaves the body to the
    /// general reading, which also gives every error (the layout assumes `", "` between
    /// parts, and a value it cannot read may be two parts the general reading splits).
    /// Inlined: as a call it cost 30 instructions a line (1,060 → 1,090 a line on the bench
    /// log's head once the modules around it moved).
    #[inline]
    fn read<'a, S: Sink<'a>>(&self, body: &'a str, s: &mut S) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        let b = body.as_bytes();
        let mut pos = 0;
        for (key, f) in &self.slots {
            // the separator and key after a value also check where that value ended
            if !key.at(b, pos) {
                return false;
            }
            let vstart = pos + key.len;
            let f = *f;
            let vend = match f.and_then(|f| plain_field(s, f, b, vstart)) {
                Some(end) => end,
                None => {
                    let mut vend = vstart;
                    while vend < b.len() && !(b[vend] == b',' && b.get(vend + 1) == Some(&b' ')) {
                        vend += 1;
                    }
                    if let Some(f) = f {
                        if !s.value(f, &body[vstart..vend]) {
                            return false;
                        }
                    }
                    vend
                }
            };
            pos = vend;
        }
        // every part of the body must have been read
        pos == b.len()
    }
}

/// Where the cached layout puts a stats body's values: a whole [`Step`] for the parsed
/// record, or the [`Gauges`] a report reads (which skips the rest of a step, and leaves any
/// value that is not a plain number to the general reading).
trait Sink<'a> {
    /// Whether the value of `f` is stored; a value not stored is only checked.
    fn keeps(&self, _f: Field) -> bool {
        true
    }
    /// Stores a plain number; `None` when the field's type refuses it (a fraction in an
    /// integer field): the value then goes to [`Sink::value`].
    fn plain(&mut self, f: Field, p: &Plain) -> Option<()>;
    fn graph(&mut self, v: bool);
    /// Reads any other spelling; false when it does not read.
    fn value(&mut self, f: Field, v: &'a str) -> bool;
}

impl<'a> Sink<'a> for Step<'a> {
    #[inline]
    fn plain(&mut self, f: Field, p: &Plain) -> Option<()> {
        match f {
            Field::Running => self.running = Some(p.uint()?),
            Field::Waiting => self.waiting = Some(p.uint()?),
            Field::Tokens => self.tokens = Some(p.uint()?),
            Field::NewSeq => self.new_seq = Some(p.uint()?),
            Field::NewTokens => self.new_tokens = Some(p.uint()?),
            Field::CachedTokens => self.cached_tokens = Some(p.uint()?),
            Field::KvUsage => self.kv_usage = Some(p.float()),
            Field::SwaUsage => self.swa_usage = Some(p.float()),
            Field::MambaUsage => self.mamba_usage = Some(p.float()),
            Field::GenTps => self.gen_tps = Some(p.float()),
            Field::PromptTps => self.prompt_tps = Some(p.float()),
            Field::AcceptLen => self.accept_len = Some(p.float()),
            Field::AcceptRate => self.accept_rate = Some(p.float()),
            Field::HitRate | Field::Graph => return None,
        }
        Some(())
    }

    #[inline]
    fn graph(&mut self, v: bool) {
        self.graph = Some(v);
    }

    fn value(&mut self, f: Field, v: &'a str) -> bool {
        apply_field(self, f, v).is_ok()
    }
}

/// The [`Gauges`] sink of a quick reading: stores the fields it keeps ([`Keep`]), checks the
/// others as it would store them.
struct Kept<'g> {
    g: &'g mut Gauges,
    fields: u32,
}

impl Sink<'_> for Kept<'_> {
    #[inline]
    fn keeps(&self, f: Field) -> bool {
        self.fields & (1 << f as u32) != 0
    }

    #[inline]
    fn plain(&mut self, f: Field, p: &Plain) -> Option<()> {
        let g = &mut *self.g;
        match f {
            Field::Running => g.running = Some(p.uint()?),
            Field::Waiting => g.waiting = Some(p.uint()?),
            Field::NewSeq => g.new_seq = Some(p.uint()?),
            Field::NewTokens => g.new_tokens = Some(p.uint()?),
            Field::KvUsage => g.kv_usage = Some(p.float()),
            Field::GenTps => g.gen_tps = Some(p.float()),
            Field::PromptTps => g.prompt_tps = Some(p.float()),
            Field::AcceptLen => g.accept_len = Some(p.float()),
            // not gauges: never kept
            Field::Tokens
            | Field::CachedTokens
            | Field::SwaUsage
            | Field::MambaUsage
            | Field::AcceptRate
            | Field::HitRate
            | Field::Graph => return None,
        }
        Some(())
    }

    #[inline]
    fn graph(&mut self, _: bool) {}

    fn value(&mut self, _: Field, _: &str) -> bool {
        false
    }
}

/// Whether a plain number is a value a step's field `f` takes as it stands: an integer field
/// takes no fraction and no sign; `hit rate` and `cuda graph` take other spellings.
#[inline]
fn takes_plain(f: Field, p: &Plain) -> bool {
    match f {
        Field::Running
        | Field::Waiting
        | Field::Tokens
        | Field::NewSeq
        | Field::NewTokens
        | Field::CachedTokens => p.uint().is_some(),
        Field::KvUsage
        | Field::SwaUsage
        | Field::MambaUsage
        | Field::GenTps
        | Field::PromptTps
        | Field::AcceptLen
        | Field::AcceptRate => true,
        Field::HitRate | Field::Graph => false,
    }
}

/// Reads a number field whose value is a plain number, in the same pass that finds its end,
/// and returns that end; the caller checks that the body ends or goes on with `", "` there.
/// `None` leaves the value to [`Sink::value`] (other spellings, and every error, are read and
/// reported there).
#[inline]
fn plain_field<'a, S: Sink<'a>>(s: &mut S, f: Field, b: &[u8], at: usize) -> Option<usize> {
    // `cuda graph: True`, on every decode line
    if f == Field::Graph {
        let (v, end) = match b.get(at) {
            Some(b'T') if b[at..].starts_with(b"True") => (true, at + 4),
            Some(b'F') if b[at..].starts_with(b"False") => (false, at + 5),
            _ => return None,
        };
        s.graph(v);
        return Some(end);
    }
    if !s.keeps(f) {
        // checked, not converted (its digits' value is never computed) nor stored
        let p = Plain::at(b, at)?;
        return takes_plain(f, &p).then_some(p.end);
    }
    let p = Plain::at(b, at)?;
    s.plain(f, &p)?;
    Some(p.end)
}

/// `full=1190, swa=1190` (0.4.9 hybrid SWA) → (`1190`, Some(`1190`)).
fn full_swa(v: &str) -> (&str, Option<&str>) {
    match v.strip_prefix("full=") {
        Some(r) => match r.split_once(", swa=") {
            Some((full, swa)) => (full, Some(swa)),
            None => (r, None),
        },
        None => (v, None),
    }
}

/// A field met twice in one body: never last-wins (two records glued on one line gave one
/// record with the values of both).
pub const REPEATED: &str = "a key appears twice (several records on one line?)";

fn set_u(slot: &mut Option<u64>, v: &str) -> Result<(), &'static str> {
    if slot.is_some() {
        return Err(REPEATED);
    }
    *slot = Some(uint(v).ok_or("an integer field has a non-integer value")?);
    Ok(())
}

fn set_f(slot: &mut Option<f64>, v: &str) -> Result<(), &'static str> {
    if slot.is_some() {
        return Err(REPEATED);
    }
    *slot = Some(float(v).ok_or("a number field has a non-numeric value")?);
    Ok(())
}

/// The columns SGLang keys map to: the one table both the parser and [`extra`] consult.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Running,
    Waiting,
    Tokens,
    KvUsage,
    SwaUsage,
    MambaUsage,
    GenTps,
    PromptTps,
    AcceptLen,
    AcceptRate,
    NewSeq,
    NewTokens,
    CachedTokens,
    HitRate,
    Graph,
}

fn field(key: &str) -> Option<Field> {
    Some(match key {
        "#running-req" | "#running_req" => Field::Running,
        "#queue-req" | "#remaining_req" => Field::Waiting,
        "#token" | "#full token" | "#gpu token" => Field::Tokens,
        "token usage" | "full token usage" | "gpu token usage" => Field::KvUsage,
        "swa token usage" => Field::SwaUsage,
        "mamba usage" => Field::MambaUsage,
        "gen throughput (token/s)" => Field::GenTps,
        "input throughput (token/s)" => Field::PromptTps,
        "accept len" => Field::AcceptLen,
        "accept rate" => Field::AcceptRate,
        "#new-seq" | "#seq" => Field::NewSeq,
        "#new-token" | "#new_token" => Field::NewTokens,
        "#cached-token" | "#cached_token" => Field::CachedTokens,
        "cache hit rate" | "tree_cache_hit_rate" => Field::HitRate,
        k if k.ends_with(" graph") => Field::Graph,
        _ => return None,
    })
}

/// An SGLang body pair that no column takes (the 0.4.9 `#token: full=…, swa=…` gives its SWA
/// half as `#swa token`).
fn extra<'a>(key: &'a str, value: &'a str, _: &mut bool) -> Option<(&'a str, &'a str)> {
    match field(key) {
        None if !key.is_empty() => Some((key, value)),
        Some(Field::Tokens) => full_swa(value).1.map(|swa| ("#swa token", swa)),
        _ => None,
    }
}

fn apply<'a>(s: &mut Step<'a>, key: &'a str, value: &'a str) -> Result<(), &'static str> {
    if key.is_empty() {
        return Err("a part without `key: value` (wrapped or cut line?)");
    }
    match field(key) {
        Some(f) => apply_field(s, f, value),
        None => Ok(()),
    }
}

fn apply_field(s: &mut Step<'_>, f: Field, value: &str) -> Result<(), &'static str> {
    match f {
        Field::Running => set_u(&mut s.running, value)?,
        Field::Waiting => set_u(&mut s.waiting, value)?,
        Field::Tokens => set_u(&mut s.tokens, full_swa(value).0)?,
        Field::KvUsage => {
            let (full, swa) = full_swa(value);
            set_f(&mut s.kv_usage, full)?;
            if let Some(swa) = swa {
                set_f(&mut s.swa_usage, swa)?;
            }
        }
        Field::SwaUsage => set_f(&mut s.swa_usage, value)?,
        Field::MambaUsage => set_f(&mut s.mamba_usage, value)?,
        Field::GenTps => set_f(&mut s.gen_tps, value)?,
        Field::PromptTps => set_f(&mut s.prompt_tps, value)?,
        Field::AcceptLen => set_f(&mut s.accept_len, value)?,
        Field::AcceptRate => set_f(&mut s.accept_rate, value)?,
        Field::NewSeq => set_u(&mut s.new_seq, value)?,
        Field::NewTokens => set_u(&mut s.new_tokens, value)?,
        Field::CachedTokens => set_u(&mut s.cached_tokens, value)?,
        Field::HitRate => {
            s.prefix_hit_rate =
                Some(percent_as_fraction(value).ok_or("a percent field is not a number")?)
        }
        Field::Graph => s.graph = Some(pybool(value).ok_or("a graph flag is not True/False")?),
    }
    Ok(())
}

/// 0.1.14–0.1.16: `new fill batch. #seq: 1. #cached_token: 0. … tree_cache_hit_rate: 0.00%.`
fn new_fill_batch(msg: &str) -> Body<'_> {
    let Some(body) = msg.strip_prefix("new fill batch. ") else {
        return Body::Malformed("`new fill batch` without its `. ` separator");
    };
    let body = body.trim_end_matches(['.', ' ']);
    let mut s = Step {
        engine: SG,
        kind: Some(StepKind::Prefill),
        ..Step::default()
    };
    for part in body.split(". ") {
        let Some((k, v)) = part.split_once(": ") else {
            return Body::Malformed("a part without `key: value` in `new fill batch`");
        };
        if let Err(why) = apply(&mut s, k, v) {
            return Body::Malformed(why);
        }
    }
    if s.new_seq.is_none() {
        return Body::Malformed("`new fill batch` without `#seq`");
    }
    Body::Step(s)
}

/// Retraction lines of every version; the count is `#retracted_reqs`.
fn retraction(msg: &str) -> Body<'_> {
    let count = msg.find("#retracted_reqs: ").and_then(|i| {
        let r = &msg[i + "#retracted_reqs: ".len()..];
        uint(&r[..r.find(',').unwrap_or(r.len())])
    });
    match count {
        Some(n) => event(EventKind::Retraction, msg, Some(n)),
        None => Body::Malformed("retraction line without `#retracted_reqs`"),
    }
}

/// `KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB` (and the MLA / dtype forms).
fn kv_allocated(rest: &str) -> Body<'_> {
    let mut fixed: [(&'static str, &str); 4] = [("", ""); 4];
    let mut n = 0;
    for (k, v) in pairs(rest.trim().trim_end_matches('.')) {
        let name = match k {
            "#tokens" => "kv_cache_tokens",
            "K size" => "k_cache_size",
            "V size" => "v_cache_size",
            "KV size" => "kv_cache_size",
            "dtype" => "kv_cache_dtype",
            _ => continue,
        };
        if n < 4 {
            fixed[n] = (name, v);
            n += 1;
        }
    }
    Body::Config(Config::new(Engine::Sglang, &fixed[..n], None))
}

/// `Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=…, mem usage=….`
fn load_weight(rest: &str) -> Body<'_> {
    let mut fixed: [(&'static str, &str); 4] = [("", ""); 4];
    let mut n = 0;
    for part in rest.trim_end_matches('.').split(", ") {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        let name = match k {
            "type" => "model_type",
            "dtype" => "dtype",
            "quant" => "quantization",
            "mem usage" => "weight_mem_usage",
            _ => continue,
        };
        if n < fixed.len() {
            fixed[n] = (name, v);
            n += 1;
        }
    }
    Body::Config(Config::new(Engine::Sglang, &fixed[..n], None))
}

/// `server_args=ServerArgs(model_path='…', …)` (0.2.0–0.5.19) or `server_args={…}` (0.5.20+).
/// The dump may be cut short by a wrapper; what is there is kept.
fn server_args(rest: &str) -> Body<'_> {
    let inner = if let Some(r) = rest.strip_prefix('{') {
        r.strip_suffix('}').unwrap_or(r)
    } else if let Some(open) = rest.find('(') {
        let r = &rest[open + 1..];
        r.strip_suffix(')').unwrap_or(r)
    } else {
        return Body::Malformed("`server_args=` is neither `ServerArgs(…)` nor `{…}`");
    };
    Body::Config(Config::new(Engine::Sglang, &[], Some(inner)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (the corpus test): a line cut inside the key after an unmodelled pair
    /// (`#transferring-req: 1, ti`) read the cut part into that pair's value, silently; it
    /// is partial, and the pair keeps its value.
    #[test]
    fn cut_after_an_unmodelled_pair_is_partial() {
        let msg = "Prefill batch. #new-seq: 1, #new-token: 2048, #cached-token: 0, token usage: 0.01, #running-req: 0, #unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 1, ti";
        let Some(Body::Step(s)) = parse(msg) else {
            panic!("{msg}")
        };
        assert!(s.partial);
        assert_eq!(s.new_tokens, Some(2048));
        let extra: Vec<(&str, &str)> = s.extra.iter().collect();
        assert!(extra.contains(&("#transferring-req", "1")), "{extra:?}");
    }

    /// The first bytes `parse_into` lets through cover every message it reads: on every
    /// fixture message, it answers as the reading past the first byte does.
    #[test]
    fn the_first_byte_gate_lets_every_message_through() {
        let mut firsts = std::collections::BTreeSet::new();
        let mut lines = crate::testing::fixture_lines(&["sglang", "vllm", "messy"]);
        // an arm no fixture log shows
        lines.push("[2025-05-10 22:29:22] Scheduler hit an exception: Traceback …".into());
        for l in lines {
            let (_, msg) = crate::wrappers::prefix::split(&l);
            let (mut a, mut b) = (Body::Other, Body::Other);
            let gated = parse_into(msg, &mut a);
            assert_eq!(gated, parse_message(msg, &mut b), "{l:?}");
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{l:?}");
            if gated {
                firsts.insert(msg.as_bytes()[0]);
            }
        }
        // every byte let through is the first of some fixture message
        assert_eq!(firsts.len(), 12, "{firsts:?}");
    }

    /// Regression (found by the `engine_messages` fuzz target once it compared the two
    /// readings): the general reading also splits parts at `". "`, the cached layout only at
    /// `", "`; a value the layout could not read was reported malformed where the general
    /// reading split it in two and read both.
    #[test]
    fn a_value_the_layout_cannot_read_goes_to_the_general_reading() {
        let msg = "#running-req: 0, en:: 0\0\0n, swa token usage: 0. #te: V8,V #to";
        let _ = parse("Decode batch, #running-req: 1");
        let general = parse(msg);
        assert!(matches!(general, Some(Body::Step(_))), "{general:?}");
        assert_eq!(parse(msg), general);
    }

    /// A body read against the cached layout (values parsed where they stand) gives what the
    /// general reading gives, for every spelling of a value, valid or not.
    #[test]
    fn cached_layout_reads_like_the_general_path() {
        let values = [
            "40",
            "0",
            "-3",
            "5.0",
            "1,048",
            "1,048,576",
            "12345678901234567",
            "0.12",
            "1863.65",
            "-0.5",
            ".5",
            "5.",
            "nan",
            "1e6",
            "True",
            "x",
            "",
            "full=10, swa=20",
            // a plain number cut short by what follows it
            "12x",
            "3.5.1",
            "7 ",
            "8,",
        ];
        let numbers = |v: &str| {
            format!("Decode batch, #running-req: {v}, #token: {v}, token usage: {v}, cuda graph: True, gen throughput (token/s): {v}, #queue-req: {v}")
        };
        let graph = |v: &str| {
            format!("Decode batch, #running-req: 1, #token: 2, token usage: 0.5, cuda graph: {v}, gen throughput (token/s): 3.5, #queue-req: 4")
        };
        let flags = ["True", "False", "true", "false", "Truex", "Fals", "T", ""];
        let cases = values.iter().map(|v| numbers(v));
        for line in cases.chain(flags.iter().map(|v| graph(v))) {
            // first after another layout (general reading), then after its own (cached)
            let _ = parse("Decode batch, #running-req: 1");
            let general = parse(&line);
            let _ = parse(&numbers("7"));
            let cached = parse(&line);
            assert_eq!(general, cached, "{line}");
        }
    }

    /// The quick reading of a message agrees with the general one whenever it answers;
    /// returns whether it answered.
    fn quick_agrees(msg: &str) -> bool {
        let mut g = Gauges {
            running: Some(99),
            ..Gauges::default()
        };
        let Some(kind) = quick_gauges(msg, &mut g) else {
            return false;
        };
        match parse(msg) {
            Some(Body::Step(s)) => {
                assert_eq!(s.kind, Some(kind), "{msg}");
                assert_eq!(s.gauges(), g, "{msg}");
            }
            other => panic!("quick reading answered {kind:?} for {other:?}: {msg}"),
        }
        true
    }

    /// Every stats line of the fixtures, and each with one byte changed anywhere, read
    /// quickly after the general reading left its layout cached (and after another layout).
    #[test]
    fn quick_reading_gives_the_gauges_of_the_general_reading() {
        let mut msgs: Vec<String> = vec![
            "Decode batch, #running-req: 64, #token: 67873, token usage: 0.06, cuda graph: True, gen throughput (token/s): 790.97, #queue-req: 490".into(),
            "Prefill batch, #new-seq: 3, #new-token: 3056, #cached-token: 472, token usage: 0.00, #running-req: 1, #queue-req: 496".into(),
            "Decode batch. #running-req: 1, #token: 2, token usage: 0.5, gen throughput (token/s): 3.5, #queue-req: 4, ".into(),
            "Decode batch [440], #running-req: 1, #token: 2".into(),
            "Prefill batch(mixed #running-req: 5). #new-seq: 1, #new-token: 7".into(),
            "Decode batch, #token: 2, token usage: 0.5".into(),
            "Prefill batch, #cached-token: 2, token usage: 0.5".into(),
        ];
        for l in crate::testing::fixture_lines(&["sglang", "messy"]) {
            let msg = crate::wrappers::prefix::split(&l).1;
            if msg.contains(" batch") {
                msgs.push(msg.to_owned());
            }
        }
        let (mut answered, mut checked) = (0, 0);
        let mut check = |m: &str| {
            checked += 1;
            // its own layout cached, then another one
            let _ = parse(m);
            answered += usize::from(quick_agrees(m));
            let _ = parse("Decode batch, #running-req: 1");
            let _ = parse("Prefill batch, #new-seq: 1");
            assert!(!quick_agrees(m) || m.ends_with(": 1"), "{m}");
        };
        for m in &msgs {
            check(m);
            let with = [",", " ", ".", "0", "-", ":", "e", "x", "é"];
            for x in crate::testing::mutations(m, m.len(), &with) {
                check(&x);
            }
        }
        assert!(
            answered > 1000 && checked > 2 * answered,
            "{answered} of {checked}"
        );
    }

    /// Regression (found by the `log_line` fuzz target): more than four known keys in a
    /// `Load weight end.` line overran the fixed pair array.
    #[test]
    fn repeated_load_weight_keys_do_not_overflow() {
        let msg = "Load weight end. type=A, dtype=B, type=C, dtype=D, quant=E, mem usage=F";
        let Some(Body::Config(c)) = parse(msg) else {
            panic!()
        };
        assert_eq!(c.pairs().count(), 4);
    }
}
