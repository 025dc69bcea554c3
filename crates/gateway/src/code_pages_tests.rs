use super::*;

/// The mappings of a release gateway, from its `/proc/<pid>/smaps` (fields
/// trimmed to a few).
const SMAPS: &str = "\
5559d3398000-5559d38f4000 r--p 00000000 fd:01 1048633                    /opt/gw/gateway
Size:               5488 kB
Rss:                2840 kB
Anonymous:             0 kB
VmFlags: rd mr mw me dw sd
5559d38f4000-5559d494d000 r-xp 0055b000 fd:01 1048633                    /opt/gw/gateway
Size:              16740 kB
Rss:                9096 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me dw sd
5559d494d000-5559d49db000 r--p 015b3000 fd:01 1048633                    /opt/gw/gateway
Size:                568 kB
Rss:                 568 kB
Anonymous:           560 kB
VmFlags: rd mr mw me ac sd
5559d49db000-5559d49e8000 rw-p 01640000 fd:01 1048633                    /opt/gw/gateway
Size:                 52 kB
Rss:                  52 kB
Anonymous:            52 kB
VmFlags: rd wr mr mw me ac sd
7f3a1c000000-7f3a1c021000 rw-p 00000000 00:00 0 
Size:                132 kB
Rss:                   4 kB
Anonymous:             4 kB
VmFlags: rd wr mr mw me nr sd
7f3a1d200000-7f3a1d226000 r--p 00000000 fd:01 2098001                    /usr/lib/x86_64-linux-gnu/libc.so.6
Size:                152 kB
Rss:                 152 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
7f3a1d226000-7f3a1d37b000 r-xp 00026000 fd:01 1048633                    /usr/lib/x86_64-linux-gnu/libc.so.6
Size:               1364 kB
Rss:                1020 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me sd
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
Size:                  4 kB
Rss:                   0 kB
Anonymous:             0 kB
VmFlags: ex
";

#[test]
fn smaps_is_read_mapping_by_mapping() {
    let mappings = parse(SMAPS);
    assert_eq!(mappings.len(), 8);
    assert_eq!(
        mappings[1],
        Mapping {
            start: 0x5559_d38f_4000,
            end: 0x5559_d494_d000,
            writable: false,
            path: "/opt/gw/gateway",
            rss_kb: 9096,
            anonymous_kb: 0,
        }
    );
    assert!(mappings[3].writable);
    assert_eq!(mappings[4].path, "");
    assert_eq!(mappings[7].path, "[vsyscall]");
}

#[test]
fn only_read_only_file_mappings_without_private_pages_are_dropped() {
    let dropped: Vec<_> = droppable(SMAPS)
        .iter()
        .map(|m| (m.start, m.rss_kb))
        .collect();
    // The executable's headers, read-only data and code, and libc's; not
    // the relocated data (private pages), not the writable data, not
    // anonymous memory, not the kernel's pages.
    assert_eq!(
        dropped,
        [
            (0x5559_d339_8000, 2840),
            (0x5559_d38f_4000, 9096),
            (0x7f3a_1d20_0000, 152),
            (0x7f3a_1d22_6000, 1020)
        ]
    );
}

#[test]
fn a_device_mapping_is_kept() {
    let smaps = "\
7f3a1e000000-7f3a1e001000 r--s 00000000 00:05 7                          /dev/zero
Size:                  4 kB
Rss:                   4 kB
Anonymous:             0 kB
";
    assert_eq!(parse(smaps).len(), 1);
    assert!(droppable(smaps).is_empty());
}

#[test]
fn a_mapping_whose_private_pages_are_not_reported_is_kept() {
    let smaps = "\
5559d38f4000-5559d494d000 r-xp 0055b000 fd:01 1048633                    /opt/gw/gateway
Size:              16740 kB
Rss:                9096 kB
";
    assert!(droppable(smaps).is_empty());
}

/// The KiB resident in this process's droppable mappings.
#[cfg(target_os = "linux")]
fn resident_kb() -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    droppable(&smaps).iter().map(|m| m.rss_kb).sum()
}

#[cfg(target_os = "linux")]
#[test]
fn the_code_pages_given_back_leave_the_rss_and_the_code_still_runs() {
    let before = resident_kb();
    let released = release_code_pages().unwrap();
    assert!(released > 0, "nothing resident was dropped");
    let after = resident_kb();
    assert!(
        after < before,
        "resident {before} KiB before, {after} KiB after"
    );
    // Code runs again from the pages mapped back.
    let mappings = parse(SMAPS);
    assert_eq!(mappings.len(), 8);
}

#[tokio::test]
async fn the_releases_come_on_their_schedule_until_stopped() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let count = Arc::new(AtomicUsize::new(0));
    let stop = CancellationToken::new();
    let counted = count.clone();
    let releases = spawn_schedule(
        Duration::from_millis(20),
        Duration::from_millis(20),
        stop.clone(),
        move || {
            counted.fetch_add(1, Ordering::SeqCst);
        },
    );
    assert_eq!(count.load(Ordering::SeqCst), 0, "not before the first wait");
    for _ in 0..500 {
        if count.load(Ordering::SeqCst) >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(count.load(Ordering::SeqCst) >= 3, "the releases came again");
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), releases)
        .await
        .expect("the task ends when stopped")
        .unwrap();
    let after_stop = count.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        count.load(Ordering::SeqCst),
        after_stop,
        "none after the stop"
    );
}
