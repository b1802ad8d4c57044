//! The `tokstat` binary: everything lives in the library; this maps it to an exit code.

fn main() {
    keep_freed_memory();
    // stdout is line-buffered: a pretty-printed report would be a write per line
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    // stderr is not locked for the whole run, unlike stdout: a message written on another
    // thread (a worker's, a library's warning) waited for that lock forever
    let style = tokstat::render::Style::detect();
    let code = tokstat::run_with(std::env::args_os(), &mut out, &mut std::io::stderr(), style);
    // `run` flushed it (and reported a failure); nothing is left to write
    drop(out);
    std::process::exit(code);
}

/// glibc hands a freed block of more than 128 KB back to the kernel, and shrinks its heap
/// once 128 KB of it are free: `export`, which frees megabyte-sized buffers for every column
/// of every row group, then had the kernel map and zero fresh pages for the next ones, a
/// fifth of the time of writing `steps` (see bench/README.md). Freed memory is kept for
/// reuse instead, up to sizes no buffer of ours reaches.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets the allocator's parameters; called before any thread starts
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}
