//! `tokstat watch`: follows a running job and redraws its view ([`crate::live::watch`]).
//! In a terminal the view is redrawn in place; otherwise one line per look is printed.

use crate::cli::{ServerArgs, WatchArgs};
use crate::live::follow::{Follower, Look};
use crate::live::scrape::Scraper;
use crate::live::watch::Watch;
use crate::render::{self, Style};
use anyhow::Result;
use std::io::Write;
use std::time::Instant;

pub fn run(a: &WatchArgs, style: Style, out: &mut dyn Write, tty: bool) -> Result<i32> {
    let total = match &a.total_from {
        Some(path) => Some(super::pulse::requests_in(path)?),
        None => a.total,
    };
    let opts = super::report::options(&a.inputs, &a.dates, &a.completions, &ServerArgs::default());
    let mut follower = (!a.inputs.is_empty()).then(|| Follower::new(&opts));
    let mut scraper = match &a.metrics {
        Some(url) => Some(Scraper::new(
            url,
            a.save_scrapes.as_deref(),
            a.every.max(std::time::Duration::from_secs(2)),
            false,
        )?),
        None => None,
    };
    let prometheus = match &a.prometheus.prometheus {
        Some(url) => Some(super::report::prometheus_access(
            url,
            &a.prometheus.access,
            0,
            0,
        )?),
        None => None,
    };
    let mut watch = Watch::default();
    let start = Instant::now();
    let term = console::Term::stdout();
    loop {
        let look = match &mut follower {
            Some(f) => f.look()?,
            None => Look::default(),
        };
        let point = match (&mut scraper, &prometheus) {
            (Some(s), _) => s.scrape()?,
            (None, Some(q)) => crate::live::prometheus::last_point(q)?,
            (None, None) => None,
        };
        let at = start.elapsed().as_secs_f64();
        watch.add(at, look);
        // (the look's read is dropped: its memory goes back before the watch sleeps)
        crate::live::memory::release_freed();
        let mut view = watch.view(at, total);
        view.metrics = point;
        if a.once {
            render::pulse::watch_view(&view, style, out)?;
            return Ok(0);
        }
        if tty {
            term.clear_screen()?;
            render::pulse::watch_view(&view, style, out)?;
        } else {
            writeln!(out, "{}", render::pulse::watch_line(&view))?;
        }
        out.flush()?;
        if a.duration.is_some_and(|d| start.elapsed() + a.every > d) {
            return Ok(0);
        }
        std::thread::sleep(a.every);
    }
}
