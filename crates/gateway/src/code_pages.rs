//! The executable's start-up code pages, given back once the gateway serves.
//!
//! Most of an idle gateway's resident memory is not its own data but the
//! pages of its executable that start-up touched: argument and configuration
//! parsing, TLS roots, the router, the store's migrations. The kernel maps
//! file pages in windows of 64 KB around each page a fault touches, so a
//! start-up that runs code spread over the whole `.text` leaves some 9 MB of
//! code mapped that no request runs again (docs/benchmarks.md, "Round
//! eleven"). [`release_startup_code`] drops the page-table entries of the
//! executable's read-only mappings once serving begins; the pages a request
//! runs are mapped again by its first faults (minor faults: they are still in
//! the page cache), the others stay out of the process's RSS. The pages
//! themselves stay in the page cache, clean and reclaimable, as before.
//!
//! Only mappings of the executable's own file that are not writable and hold
//! no private (copied-on-write) page are dropped: their content is exactly
//! the file's, so mapping a page again gives the same bytes. The relocated
//! read-only data (`RELRO`) holds private pages and is left alone.

/// One mapping of `/proc/self/smaps`, as far as the choice needs it.
#[derive(Debug, PartialEq, Eq)]
struct Mapping<'a> {
    start: usize,
    end: usize,
    writable: bool,
    inode: u64,
    path: &'a str,
    /// Resident, in KiB.
    rss_kb: u64,
    /// Private pages not backed by the file (copied on write), in KiB.
    anonymous_kb: u64,
}

/// Give back the executable's start-up code pages (the module doc says
/// which and why). Returns how many KiB were resident in the mappings
/// dropped. Linux only; elsewhere it does nothing.
pub(crate) fn release_startup_code() -> std::io::Result<u64> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt as _;
        let exe = std::fs::read_link("/proc/self/exe")?;
        let inode = std::fs::metadata("/proc/self/exe")?.ino();
        let smaps = std::fs::read_to_string("/proc/self/smaps")?;
        let mut released = 0;
        for mapping in droppable(&smaps, exe.to_string_lossy().as_ref(), inode) {
            drop_page_table_entries(mapping.start, mapping.end - mapping.start)?;
            released += mapping.rss_kb;
        }
        Ok(released)
    }
    #[cfg(not(target_os = "linux"))]
    Ok(0)
}

/// The mappings of `smaps` that [`release_startup_code`] may drop: of the
/// file `exe` (its path and inode), not writable, without a private page,
/// and with something resident.
fn droppable<'a>(smaps: &'a str, exe: &str, inode: u64) -> Vec<Mapping<'a>> {
    parse(smaps)
        .into_iter()
        .filter(|m| {
            m.path == exe && m.inode == inode && !m.writable && m.anonymous_kb == 0 && m.rss_kb > 0
        })
        .collect()
}

/// The mappings of a `/proc/<pid>/smaps` text. A header line is
/// `start-end perms offset dev inode [path]`; the fields of its mapping
/// follow, one `Name: value kB` a line.
fn parse(smaps: &str) -> Vec<Mapping<'_>> {
    let mut mappings: Vec<Mapping<'_>> = Vec::new();
    for line in smaps.lines() {
        if let Some(mapping) = header(line) {
            mappings.push(mapping);
            continue;
        }
        let Some(current) = mappings.last_mut() else {
            continue;
        };
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let kb = || {
            value
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        };
        match name {
            "Rss" => current.rss_kb = kb().unwrap_or(0),
            // Unknown is taken as private: such a mapping is kept.
            "Anonymous" => current.anonymous_kb = kb().unwrap_or(u64::MAX),
            _ => {}
        }
    }
    mappings
}

/// A mapping's header line, or `None` for a field line.
fn header(line: &str) -> Option<Mapping<'_>> {
    let mut fields = line.splitn(6, ' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let perms = fields.next()?;
    let _offset = fields.next()?;
    let _device = fields.next()?;
    let inode = fields.next()?.parse().ok()?;
    let path = fields.next().unwrap_or("").trim_start();
    Some(Mapping {
        start,
        end,
        writable: perms.as_bytes().get(1) == Some(&b'w'),
        inode,
        path,
        // Until its fields say otherwise, nothing resident and not droppable.
        rss_kb: 0,
        anonymous_kb: u64::MAX,
    })
}

#[cfg(target_os = "linux")]
fn drop_page_table_entries(start: usize, len: usize) -> std::io::Result<()> {
    #[expect(
        unsafe_code,
        reason = "madvise has no safe wrapper. Sound here: the range is a whole \
                  mapping of the executable's file, not writable, with no private \
                  page (see `droppable`), so MADV_DONTNEED only drops page-table \
                  entries and the next access maps the same file bytes again; no \
                  value any reference points to changes"
    )]
    // SAFETY: see the reason above.
    let result = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
#[path = "code_pages_tests.rs"]
mod tests;
