//! Inline SVG charts for the HTML renderers: a plot area with axes and ticks, lines, bands,
//! bars and markers. Hand-written: a chart is a few paths, simpler here than a plotting
//! crate's backend (and nothing is loaded from anywhere when the page opens).
//!
//! Every chart is an `<svg data-chart="NAME">` and every series a shape with
//! `data-series="NAME"`, so that a test can find each chart's series in the rendered page.

use std::fmt::Write;

/// Colours of series by index, readable on light and dark backgrounds.
pub const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A round step for about `n` ticks over `span`.
fn step(span: f64, n: f64) -> f64 {
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

fn tick_label(v: f64, step: f64) -> String {
    if step >= 1.0 {
        format!("{v:.0}")
    } else if step >= 0.1 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Where the x axis has its ticks.
enum Ticks {
    /// Round numbers.
    Numbers,
    /// Seconds, at round lengths of time (a minute, five, an hour, …).
    Time,
    /// One category per unit of x, labelled at its middle.
    Categories(Vec<String>),
}

/// Round lengths of time, seconds.
const TIME_STEPS: [f64; 16] = [
    1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
    21600.0, 86400.0,
];

/// A chart being drawn: data coordinates mapped into a plot area.
pub struct Chart {
    ticks: Ticks,
    name: String,
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
    body: String,
}

impl Chart {
    /// A chart of `x` and `y` ranges (each widened to be non-empty; `y` starts at 0).
    pub fn new(name: &str, x: (f64, f64), y_max: f64) -> Chart {
        let x = if x.1 > x.0 { x } else { (x.0, x.0 + 1.0) };
        let y_max = if y_max > 0.0 && y_max.is_finite() {
            y_max * 1.05
        } else {
            1.0
        };
        Chart {
            ticks: Ticks::Numbers,
            name: name.to_string(),
            w: 720.0,
            h: 260.0,
            left: 56.0,
            right: 16.0,
            top: 12.0,
            bottom: 34.0,
            x,
            y: (0.0, y_max),
            body: String::new(),
        }
    }

    /// The chart this many units high (260 unless told): stacked charts of one axis.
    pub fn height(mut self, h: f64) -> Chart {
        self.h = h.max(self.top + self.bottom + 20.0);
        self
    }

    /// Ticks on the x axis at round lengths of time (x in seconds).
    pub fn time_axis(mut self) -> Chart {
        self.ticks = Ticks::Time;
        self
    }

    /// One category per unit of x (`[k, k + 1)`), labelled by name.
    pub fn categories(mut self, names: Vec<String>) -> Chart {
        self.ticks = Ticks::Categories(names);
        self
    }

    pub fn px(&self, x: f64) -> f64 {
        self.left + (x - self.x.0) / (self.x.1 - self.x.0) * (self.w - self.left - self.right)
    }

    pub fn py(&self, y: f64) -> f64 {
        self.h
            - self.bottom
            - (y - self.y.0) / (self.y.1 - self.y.0) * (self.h - self.top - self.bottom)
    }

    /// A polyline through the points (gaps where a value is missing).
    pub fn line(&mut self, series: &str, color: &str, pts: &[(f64, Option<f64>)], width: f64) {
        let mut d = String::new();
        let mut pen = false;
        for &(x, y) in pts {
            match y.filter(|v| v.is_finite()) {
                Some(y) => {
                    let _ = write!(
                        d,
                        "{}{:.1},{:.1} ",
                        if pen { "L" } else { "M" },
                        self.px(x),
                        self.py(y)
                    );
                    pen = true;
                }
                None => pen = false,
            }
        }
        let _ = write!(
            self.body,
            r#"<path data-series="{}" d="{}" fill="none" stroke="{color}" stroke-width="{width}"/>"#,
            esc(series),
            d.trim_end()
        );
    }

    /// A band between two lines (p10 to p90).
    pub fn band(&mut self, series: &str, color: &str, pts: &[(f64, f64, f64)]) {
        if pts.is_empty() {
            return;
        }
        let mut d = String::new();
        for (k, &(x, lo, _)) in pts.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1} ",
                if k == 0 { "M" } else { "L" },
                self.px(x),
                self.py(lo)
            );
        }
        for &(x, _, hi) in pts.iter().rev() {
            let _ = write!(d, "L{:.1},{:.1} ", self.px(x), self.py(hi));
        }
        let _ = write!(
            self.body,
            r#"<path data-series="{}" d="{}Z" fill="{color}" fill-opacity="0.22" stroke="none"/>"#,
            esc(series),
            d
        );
    }

    /// Vertical bars from 0, one per `(x0, x1, y)`.
    pub fn bars(&mut self, series: &str, color: &str, bars: &[(f64, f64, f64)]) {
        let _ = write!(
            self.body,
            r#"<g data-series="{}" fill="{color}">"#,
            esc(series)
        );
        for &(x0, x1, y) in bars {
            let (a, b) = (self.px(x0), self.px(x1));
            let top = self.py(y);
            let _ = write!(
                self.body,
                r#"<rect x="{:.1}" y="{top:.1}" width="{:.1}" height="{:.1}"/>"#,
                a + 0.5,
                (b - a - 1.0).max(0.5),
                (self.py(0.0) - top).max(0.0)
            );
        }
        self.body.push_str("</g>");
    }

    /// A shaded span of x (a steady window), behind what follows.
    pub fn span(&mut self, series: &str, x0: f64, x1: f64) {
        let _ = write!(
            self.body,
            r#"<rect data-series="{}" class="span" x="{:.1}" y="{}" width="{:.1}" height="{:.1}"/>"#,
            esc(series),
            self.px(x0),
            self.top,
            (self.px(x1) - self.px(x0)).max(0.5),
            self.h - self.top - self.bottom
        );
    }

    /// A vertical rule at `x` with a label (a segment boundary, the cap, the knee).
    pub fn rule(&mut self, series: &str, x: f64, label: &str) {
        let px = self.px(x);
        let _ = write!(
            self.body,
            r#"<g data-series="{}" class="rule"><line x1="{px:.1}" x2="{px:.1}" y1="{}" y2="{:.1}"/><text x="{:.1}" y="{}">{}</text></g>"#,
            esc(series),
            self.top,
            self.h - self.bottom,
            px + 3.0,
            self.top + 10.0,
            esc(label)
        );
    }

    /// A dot with a label.
    pub fn marker(&mut self, series: &str, x: f64, y: f64, label: &str) {
        let (px, py) = (self.px(x), self.py(y));
        let _ = write!(
            self.body,
            r#"<g data-series="{}" class="marker"><circle cx="{px:.1}" cy="{py:.1}" r="5"/><text x="{:.1}" y="{:.1}">{}</text></g>"#,
            esc(series),
            px + 8.0,
            py - 6.0,
            esc(label)
        );
    }

    /// The finished `<svg>`, with axes, ticks (`x_label` formats the x ticks), axis titles
    /// and a legend of `(name, colour)`.
    pub fn finish(
        self,
        x_title: &str,
        y_title: &str,
        x_label: &dyn Fn(f64) -> String,
        legend: &[(&str, &str)],
    ) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<figure><svg data-chart="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">"#,
            esc(&self.name),
            self.w,
            self.h,
            esc(y_title)
        );
        // grid and y ticks
        let ys = step(self.y.1 - self.y.0, 5.0);
        let mut v = 0.0;
        while v <= self.y.1 + 1e-9 {
            let y = self.py(v);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{}" x2="{}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
                self.left,
                self.w - self.right,
                self.left - 6.0,
                y + 4.0,
                tick_label(v, ys)
            );
            v += ys;
        }
        let ticks: Vec<(f64, String)> = match &self.ticks {
            Ticks::Categories(names) => names
                .iter()
                .enumerate()
                .map(|(k, n)| (k as f64 + 0.5, n.clone()))
                .collect(),
            t => {
                let span = self.x.1 - self.x.0;
                let xs = match t {
                    Ticks::Time => TIME_STEPS
                        .into_iter()
                        .find(|s| span / s <= 8.0)
                        .unwrap_or(86400.0 * (span / 86400.0 / 8.0).ceil()),
                    _ => step(span, 6.0),
                };
                let mut v = (self.x.0 / xs).ceil() * xs;
                let mut out = Vec::new();
                while v <= self.x.1 + 1e-9 {
                    out.push((v, x_label(v)));
                    v += xs;
                }
                out
            }
        };
        for (v, label) in ticks {
            let _ = write!(
                s,
                r#"<text class="tick" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                self.px(v),
                self.h - self.bottom + 16.0,
                esc(&label)
            );
        }
        s.push_str(&self.body);
        let _ = write!(
            s,
            r#"<line class="axis" x1="{l}" x2="{l}" y1="{t}" y2="{b}"/><line class="axis" x1="{l}" x2="{r}" y1="{b}" y2="{b}"/>"#,
            l = self.left,
            r = self.w - self.right,
            t = self.top,
            b = self.h - self.bottom
        );
        let _ = write!(
            s,
            r#"<text class="title" x="{}" y="{}" text-anchor="middle">{}</text></svg>"#,
            (self.left + self.w - self.right) / 2.0,
            self.h - 2.0,
            esc(x_title)
        );
        s.push_str("<figcaption>");
        let _ = write!(s, "<span class=\"ytitle\">{}</span>", esc(y_title));
        for (name, color) in legend {
            let _ = write!(
                s,
                r#" <span class="key"><i style="background:{color}"></i>{}</span>"#,
                esc(name)
            );
        }
        s.push_str("</figcaption></figure>");
        s
    }
}
