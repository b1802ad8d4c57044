//! Named pipes: opened without blocking, and given up on after `--timeout`.

use std::fs::File;
use std::io;
use std::path::Path;

/// How long [`Source::open`] waits for a writer on a named pipe, in milliseconds (`u64::MAX`:
/// for ever). Set once from the command line (`--timeout`).
static PIPE_TIMEOUT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Gives up on a named pipe that no process writes to after `t`.
pub fn set_pipe_timeout(t: std::time::Duration) {
    let ms = u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
    PIPE_TIMEOUT_MS.store(ms, std::sync::atomic::Ordering::Relaxed);
}

/// Opens a named pipe for reading without blocking on its `open` (which waits, silently and
/// for ever, for a writer), then waits for its first bytes or its end: for the time set by
/// [`set_pipe_timeout`], saying on stderr after a second that it waits.
pub(super) fn open_pipe(path: &Path) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let limit = PIPE_TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed);
    let start = std::time::Instant::now();
    let mut said = false;
    loop {
        let waited = start.elapsed().as_millis() as u64;
        if waited >= limit {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "a named pipe with no writer after {:.1}s (--timeout)",
                    limit as f64 / 1000.0
                ),
            ));
        }
        if waited >= 1000 && !said {
            eprintln!(
                "tokstat: waiting for a process to write to the named pipe {} (--timeout to give up)",
                path.display()
            );
            said = true;
        }
        let step = (limit - waited).min(250) as libc::c_int;
        let mut fd = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for a descriptor this function owns
        let n = unsafe { libc::poll(&mut fd, 1, step) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        } else if n > 0 {
            break;
        }
    }
    // blocking reads from here on
    // SAFETY: fcntl on a descriptor this function owns
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(file)
}
