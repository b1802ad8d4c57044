//! A progress bar on stderr for reading that takes more than a second: bytes and files done,
//! the rate and the time left. Only when stderr is a terminal and `--quiet` is not given;
//! otherwise nothing is counted at all.

use crate::ingest::progress::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reading this long shows the bar.
const AFTER: Duration = Duration::from_secs(1);

/// Runs `f` with counters to fill (or none), drawing them while it runs.
pub fn with_bar<T>(quiet: bool, f: impl FnOnce(Option<Arc<Progress>>) -> T) -> T {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return f(None);
    }
    let progress = Arc::new(Progress::default());
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let drawer = s.spawn(|| draw(&progress, &done));
        let out = f(Some(progress.clone()));
        done.store(true, Ordering::Relaxed);
        // woken at once: a drawer asleep until its next tick would hold the exit back
        drawer.thread().unpark();
        out
    })
}

fn draw(p: &Progress, done: &AtomicBool) {
    let start = Instant::now();
    while let Some(left) = AFTER.checked_sub(start.elapsed()) {
        if done.load(Ordering::Relaxed) {
            return;
        }
        std::thread::park_timeout(left);
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:24} {bytes}/{total_bytes} · {msg} · {binary_bytes_per_sec} · {eta} left",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    while !done.load(Ordering::Relaxed) {
        let (bytes, total, files, total_files) = p.get();
        bar.set_length(total.max(bytes));
        bar.set_position(bytes);
        bar.set_message(format!("{files}/{total_files} files"));
        std::thread::park_timeout(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}
