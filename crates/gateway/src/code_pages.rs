//! The code pages no request runs, given back: at the end of start-up, once
//! its first background round and first requests are over, and now and then
//! after that.
//!
//! Most of an idle gateway's resident memory is not its own data but the
//! pages of its executable and libraries that some code touched once:
//! argument and configuration parsing, TLS roots, the router, the store's
//! migrations, then the first round of the background tasks and the
//! one-time set-up of the first requests, later a model-list refresh or an
//! error page. The kernel maps file pages in windows of 64 KB around each
//! page a fault touches, so code run once leaves megabytes mapped that no
//! request runs again (docs/benchmarks.md, "Round eleven" and "Round
//! thirteen"). [`release_code_pages`] drops the page-table entries of the
//! process's read-only file mappings; the pages requests run are mapped
//! again by their first faults (minor faults: they are still in the page
//! cache), the others stay out of the process's RSS. The pages themselves
//! stay in the page cache, clean and reclaimable, as before.
//!
//! Only mappings of a file that are not writable and hold no private
//! (copied-on-write) page are dropped: their content is exactly the file's,
//! so mapping a page again gives the same bytes. The relocated read-only
//! data (`RELRO`, private pages), the writable data, the heap and stacks,
//! and device mappings are left alone.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// When the second release comes: after the background tasks' first round
/// (the token check, the model list) and the first requests' one-time
/// set-up (lazily built tables, the first growth of the connection pools).
const AFTER_START: Duration = Duration::from_secs(5);

/// How often the release comes after that: what runs rarely (a model-list
/// refresh, a token refresh, an error answer) leaves the RSS again, and
/// mapping back the code requests run costs about a hundred minor faults.
const EVERY: Duration = Duration::from_secs(600);

/// One mapping of `/proc/self/smaps`, as far as the choice needs it.
#[derive(Debug, PartialEq, Eq)]
struct Mapping<'a> {
    start: usize,
    end: usize,
    writable: bool,
    path: &'a str,
    /// Resident, in KiB.
    rss_kb: u64,
    /// Private pages not backed by the file (copied on write), in KiB.
    anonymous_kb: u64,
}

/// Give back the read-only file pages (the module doc says which and why).
/// Returns how many KiB were resident in the mappings dropped; a mapping
/// that cannot be dropped is kept and logged at debug. Linux only;
/// elsewhere it does nothing.
fn release_code_pages() -> std::io::Result<u64> {
    #[cfg(target_os = "linux")]
    {
        let smaps = std::fs::read_to_string("/proc/self/smaps")?;
        let mut released = 0;
        for mapping in droppable(&smaps) {
            match drop_page_table_entries(mapping.start, mapping.end - mapping.start) {
                Ok(()) => released += mapping.rss_kb,
                Err(e) => tracing::debug!(path = mapping.path, "a mapping kept its pages: {e}"),
            }
        }
        Ok(released)
    }
    #[cfg(not(target_os = "linux"))]
    Ok(0)
}

/// Release the code pages [`AFTER_START`] from now, then every [`EVERY`],
/// until `stop`.
pub(crate) fn spawn_releases(stop: CancellationToken) -> JoinHandle<()> {
    spawn_schedule(AFTER_START, EVERY, stop, || {
        log_release("code pages given back");
    })
}

/// Run `release` `first` from now, then every `every`, until `stop`.
fn spawn_schedule(
    first: Duration,
    every: Duration,
    stop: CancellationToken,
    release: impl Fn() + Send + 'static,
) -> JoinHandle<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "tracked: serve() awaits this handle at shutdown"
    )]
    tokio::spawn(async move {
        let mut wait = first;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            release();
            wait = every;
        }
    })
}

/// [`release_code_pages`], its outcome logged at debug with `what`.
pub(crate) fn log_release(what: &'static str) {
    match release_code_pages() {
        Ok(kb) => tracing::debug!(kb, "{what}"),
        Err(e) => tracing::debug!("{what}: none, {e}"),
    }
}

/// The mappings of `smaps` that [`release_code_pages`] may drop: of a file
/// (not a device), not writable, without a private page, and with
/// something resident.
fn droppable(smaps: &str) -> Vec<Mapping<'_>> {
    parse(smaps)
        .into_iter()
        .filter(|m| {
            m.path.starts_with('/')
                && !m.path.starts_with("/dev/")
                && !m.writable
                && m.anonymous_kb == 0
                && m.rss_kb > 0
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
    let _inode: u64 = fields.next()?.parse().ok()?;
    let path = fields.next().unwrap_or("").trim_start();
    Some(Mapping {
        start,
        end,
        writable: perms.as_bytes().get(1) == Some(&b'w'),
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
                  mapping of a file, not writable, with no private \
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
