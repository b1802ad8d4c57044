//! Records as JSON lines (`tokstat parse`): one object per row, with `table` and the
//! schema's column names; absent fields are omitted. `extra` is a nested object here (in
//! the tables it is the same object as a JSON string).

use super::json_writer::Obj;
use crate::ingest::responses::access_kind;
use crate::ingest::scan::{Access, Visit};
use crate::ingest::scrapes::Scrapes;
use tokstat_parsers::prometheus::MetricType;
use tokstat_parsers::record::{Body, Config, Event, Step};

fn place(o: &mut Obj<'_>, v: &Visit<'_, '_>) {
    o.str("source", &v.file.source)
        .u("line", Some(v.line_no))
        .str("instance", &v.file.instance(v.line));
    if let Some(ts) = v.ts {
        o.ts("ts", ts);
    }
}

/// Appends the JSON line(s) for one visited line.
pub fn write(buf: &mut Vec<u8>, v: &Visit<'_, '_>) {
    match &v.line.body {
        Body::Step(s) => step(buf, v, s),
        Body::Event(e) => event(buf, v, e),
        Body::Config(c) => config(buf, v, c),
        Body::Other | Body::Malformed(_) => {}
    }
}

fn step(buf: &mut Vec<u8>, v: &Visit<'_, '_>, s: &Step<'_>) {
    let mut o = Obj::new(buf);
    o.str("table", "steps");
    if let Some(e) = s.engine {
        o.str("engine", e.as_str());
    }
    if let Some(k) = s.kind {
        o.str("kind", k.as_str());
    }
    place(&mut o, v);
    let r = &v.line.prefix.ranks;
    let dp = r.dp.or(s.engine_index);
    o.u("dp", dp.map(u64::from))
        .u("tp", r.tp.map(u64::from))
        .u("pp", r.pp.map(u64::from))
        .u("ep", r.ep.map(u64::from))
        .u("running", s.running)
        .u("waiting", s.waiting)
        .f("gen_tps", s.gen_tps)
        .f("prompt_tps", s.prompt_tps)
        .f("kv_usage", s.kv_usage)
        .u("tokens", s.tokens)
        .u("new_seq", s.new_seq)
        .u("new_tokens", s.new_tokens)
        .u("cached_tokens", s.cached_tokens)
        .f("accept_len", s.accept_len)
        .f("accept_rate", s.accept_rate)
        .b("graph", s.graph)
        .f("mamba_usage", s.mamba_usage)
        .f("swa_usage", s.swa_usage)
        .f("prefix_hit_rate", s.prefix_hit_rate)
        .u("preemptions", s.preemptions)
        .u("engines", s.aggregated_engines.map(u64::from))
        .pairs("extra", s.extra.iter());
    o.end();
    buf.push(b'\n');
}

fn event(buf: &mut Vec<u8>, v: &Visit<'_, '_>, e: &Event<'_>) {
    let mut o = Obj::new(buf);
    o.str("table", "events");
    if let Some(en) = e.engine {
        o.str("engine", en.as_str());
    }
    o.str("kind", e.kind.as_str());
    place(&mut o, v);
    o.str("message", e.message).u("count", e.count);
    o.end();
    buf.push(b'\n');
}

/// An HTTP access line that did not succeed, as an `events` row of kind `http_4xx` or
/// `http_5xx` (its message the line past the logger's prefix).
pub fn access(buf: &mut Vec<u8>, a: &Access<'_>) {
    let mut o = Obj::new(buf);
    o.str("table", "events");
    o.str("kind", access_kind(a.status).as_str());
    o.str("source", &a.file.source)
        .u("line", Some(a.line_no))
        .str("instance", &a.file.instance_of(None));
    if let Some(ts) = a.ts {
        o.ts("ts", ts);
    }
    o.str("message", a.msg.trim_start_matches("INFO:").trim_start())
        .u("count", Some(1));
    o.end();
    buf.push(b'\n');
}

fn config(buf: &mut Vec<u8>, v: &Visit<'_, '_>, c: &Config<'_>) {
    for (key, value) in c.pairs() {
        let mut o = Obj::new(buf);
        o.str("table", "config");
        if let Some(en) = c.engine {
            o.str("engine", en.as_str());
        }
        place(&mut o, v);
        o.str("key", key)
            .str("value", &super::json_writer::plain_number(value));
        o.end();
        buf.push(b'\n');
    }
}

/// The `metrics` table as JSON lines: one per sample of every scrape.
pub fn write_metrics(scrapes: &Scrapes, out: &mut Vec<u8>) {
    for (k, sc) in scrapes.scrapes.iter().enumerate() {
        for x in &sc.samples {
            let mut o = Obj::new(out);
            o.str("table", "metrics")
                .str("source", &sc.source)
                .u("scrape", Some(k as u64));
            if let Some(t) = sc.placed {
                o.ts("ts", t);
            }
            o.str("name", &x.name)
                .str("labels", &x.labels)
                .f("value", Some(x.value).filter(|v| v.is_finite()))
                .str(
                    "type",
                    scrapes.kind(&x.name).map_or("untyped", MetricType::as_str),
                );
            o.end();
            out.push(b'\n');
        }
    }
}
