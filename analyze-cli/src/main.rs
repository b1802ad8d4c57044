//! The `tokstat` binary: everything lives in the library; this maps it to an exit code.

fn main() {
    let code = tokstat::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(code);
}
