//! Memory handed back between looks. The binary tells glibc to keep freed memory for reuse
//! (`main.rs`: an export's megabyte buffers would otherwise be mapped and zeroed afresh),
//! which a one-shot command wants and a `watch` of hours does not: its first look reads the
//! whole job, every later one a few new lines, and the first look's peak would stay
//! resident for as long as it runs. After each look, what is free goes back to the kernel.

/// Returns the allocator's free memory to the kernel (glibc's `malloc_trim`; elsewhere
/// nothing to do).
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the heap; no block in use moves
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The resident memory of this process, bytes (Linux; `None` elsewhere).
pub fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf reads a constant of the system
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// With freed memory kept (as the binary sets glibc), 256 MB freed go back once
    /// released (how much stays before depends on the arena the test thread allocates in).
    #[test]
    fn freed_memory_goes_back_after_a_look() {
        // SAFETY: as the binary does (other tests of this process only keep more memory)
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        }
        let before = resident().unwrap();
        let blocks: Vec<Vec<u8>> = (0..256).map(|i| vec![i as u8; 1 << 20]).collect();
        let full = resident().unwrap();
        drop(blocks);
        let kept = resident().unwrap();
        release_freed();
        let after = resident().unwrap();
        let mb = |b: u64| b as f64 / (1 << 20) as f64;
        // (relative to the peak: the other tests of this process allocate beside it)
        assert!(
            mb(full) - mb(before) > 200.0,
            "{} → {}",
            mb(before),
            mb(full)
        );
        assert!(
            mb(full) - mb(after) > 128.0,
            "released: {} → {} (kept {})",
            mb(full),
            mb(after),
            mb(kept)
        );
    }
}
