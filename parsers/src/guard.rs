//! Guarded file maps: a mapped file that another process truncates while it is read (logrotate's
//! `copytruncate`, a job restarted over its log) must not kill the process.
//!
//! Reading a page of a map that lies past the file's new end raises `SIGBUS`, whose default
//! action ends the process without a word (exit 135). While a [`Guard`] watches a map, a
//! `SIGBUS` handler catches faults inside it: it maps zero-filled anonymous pages over the rest
//! of the map (from the faulting page to its end), notes the offset, and returns, so the read
//! that faulted reads zeros instead. The scan then keeps only what lies before that offset
//! ([`Guard::intact`]) and reports the file as shrunk. Faults outside every watched map go to the
//! handler that was there before (Rust's stack-overflow guard, or the default action).
//!
//! The handler does only async-signal-safe things: atomic loads and stores, `mmap`, and
//! `sigaction` to fall back to the default action.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

/// How many maps can be watched at once (files are read one or two at a time); a map beyond
/// that is read unguarded, as before.
const SLOTS: usize = 64;

/// No fault seen.
const NONE: usize = usize::MAX;

struct Slot {
    /// Address range of the map; `start == 0` marks a free slot.
    start: AtomicUsize,
    end: AtomicUsize,
    /// Offset, from `start`, of the first page found gone.
    fault: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    fault: AtomicUsize::new(NONE),
};

static WATCHED: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
/// The handler before ours, as `sigaction` returned it (written once, before ours is live).
static mut PREVIOUS: Option<libc::sigaction> = None;

/// Watches a map for the time of a read; dropped before the map is.
pub struct Guard<'a> {
    slot: Option<usize>,
    map: &'a [u8],
}

impl<'a> Guard<'a> {
    /// Starts watching `map` (the bytes of a file map). When every slot is taken, or the
    /// handler cannot be installed, the map is read unguarded.
    pub fn new(map: &'a [u8]) -> Guard<'a> {
        let installed = install();
        let start = map.as_ptr() as usize;
        let mut slot = None;
        if installed && !map.is_empty() {
            for (i, s) in WATCHED.iter().enumerate() {
                if s.start
                    .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    s.fault.store(NONE, Ordering::Release);
                    s.end.store(start + map.len(), Ordering::Release);
                    s.start.store(start, Ordering::Release);
                    slot = Some(i);
                    break;
                }
            }
        }
        Guard { slot, map }
    }

    /// The offset of the first byte found gone (the start of its page), if any read faulted.
    pub fn fault(&self) -> Option<usize> {
        let f = WATCHED[self.slot?].fault.load(Ordering::Acquire);
        (f != NONE).then_some(f.min(self.map.len()))
    }

    /// How many bytes at the start of `part`, a piece of the map, were read before the file's
    /// end as the first fault found it: all of them while nothing faulted.
    pub fn intact(&self, part: &[u8]) -> usize {
        let Some(fault) = self.fault() else {
            return part.len();
        };
        let from = (part.as_ptr() as usize).saturating_sub(self.map.as_ptr() as usize);
        fault.saturating_sub(from).min(part.len())
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let s = &WATCHED[i];
            s.end.store(0, Ordering::Release);
            s.start.store(0, Ordering::Release);
        }
    }
}

/// Installs the handler once; false if that failed.
fn install() -> bool {
    static OK: AtomicUsize = AtomicUsize::new(0);
    INSTALL.call_once(|| {
        // SAFETY: plain libc calls on zeroed, then filled, structures; `PREVIOUS` is written
        // here only, before the new handler can run.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return;
            }
            *std::ptr::addr_of_mut!(PREVIOUS) = Some(previous);
            if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0 {
                OK.store(1, Ordering::Release);
            }
        }
    });
    OK.load(Ordering::Acquire) == 1
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for s in &WATCHED {
        let start = s.start.load(Ordering::Acquire);
        let end = s.end.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX || addr < start || addr >= end {
            continue;
        }
        let from = addr / page * page;
        let to = end.next_multiple_of(page);
        // SAFETY: the range is inside a live read-only map this process made (the guard
        // outlives the read); the anonymous pages replace the file's pages there, and the
        // map's own `munmap` later removes them with it.
        let p = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                to - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            s.fault
                .fetch_min(from.saturating_sub(start), Ordering::AcqRel);
            return;
        }
    }
    // not a watched map: whatever was there before
    // SAFETY: `PREVIOUS` was written before this handler was installed and never after
    let previous = unsafe { *std::ptr::addr_of!(PREVIOUS) };
    match previous {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            // SAFETY: calling the handler that was installed, as the kernel would have
            unsafe {
                if p.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(p.sa_sigaction);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                    f(sig);
                }
            }
        }
        _ => {
            // the default action: on return the access faults again and ends the process
            // SAFETY: resetting a signal's disposition is async-signal-safe
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A map whose file is truncated under it reads zeros past the new end, the guard says
    /// where, and the process lives.
    #[test]
    fn truncated_map_reads_zeros_and_reports_where() {
        let mut f = tempfile();
        let page = PAGE.load(Ordering::Relaxed).max(4096);
        f.write_all(&vec![b'x'; page * 8]).unwrap();
        let map = unsafe { memmap2::Mmap::map(&f).unwrap() };
        let guard = Guard::new(&map);
        assert_eq!(guard.fault(), None);
        assert_eq!(map[page * 5], b'x');
        f.set_len(page as u64 * 3 + 10).unwrap();
        // SAFETY of the test: the read below faults, and the guard turns it into zeros
        let tail = std::hint::black_box(&map[page * 6..page * 7]).to_vec();
        assert!(tail.iter().all(|&b| b == 0));
        assert_eq!(guard.fault(), Some(page * 6));
        assert_eq!(std::hint::black_box(&map[page * 4..page * 5])[7], 0);
        assert_eq!(guard.fault(), Some(page * 4));
        assert_eq!(guard.intact(&map[page * 2..]), page * 2);
        assert_eq!(guard.intact(&map[page * 5..]), 0);
        assert_eq!(map[page * 3], b'x');
        drop(guard);
        drop(map);
    }

    fn tempfile() -> std::fs::File {
        let path = std::env::temp_dir().join(format!(
            "tokstat-guard-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }
}
