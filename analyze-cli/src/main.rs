//! The `tokstat` binary: everything lives in the library; this maps it to an exit code.

fn main() {
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
