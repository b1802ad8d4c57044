//! `tokstat watch`: follows a running job and redraws its view ([`crate::pulse::watch`]).
//! In a terminal the view is redrawn in place; otherwise one line per look is printed.

use crate::cli::{DateArgs, ServerArgs, WatchArgs};
use crate::pulse::follow::Follower;
use crate::pulse::watch::Watch;
use crate::render::{self, Style};
use anyhow::Result;
use std::io::Write;
use std::time::Instant;

pub fn run(a: &WatchArgs, style: Style, out: &mut dyn Write, tty: bool) -> Result<i32> {
    let total = match &a.total_from {
        Some(path) => Some(super::pulse::requests_in(path)?),
        None => a.total,
    };
    let dates = DateArgs {
        year: a.input.dates.year,
        date: a.input.dates.date.clone(),
    };
    let opts = super::report::options(
        &a.input.inputs,
        &dates,
        &a.completions,
        &ServerArgs::default(),
    );
    let mut follower = Follower::new(&opts);
    let mut watch = Watch::default();
    let start = Instant::now();
    let term = console::Term::stdout();
    loop {
        let look = follower.look()?;
        let at = start.elapsed().as_secs_f64();
        watch.add(at, look);
        let view = watch.view(at, total);
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
