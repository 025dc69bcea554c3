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
            inode: 1_048_633,
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
fn only_the_executables_read_only_mappings_without_private_pages_are_dropped() {
    let dropped: Vec<_> = droppable(SMAPS, "/opt/gw/gateway", 1_048_633)
        .iter()
        .map(|m| (m.start, m.rss_kb))
        .collect();
    // The headers, read-only data and code; not the relocated data (private
    // pages), not the writable data, not libc (another file, even where its
    // inode number is the same), not anonymous memory.
    assert_eq!(
        dropped,
        [(0x5559_d339_8000, 2840), (0x5559_d38f_4000, 9096)]
    );
    assert!(droppable(SMAPS, "/opt/gw/gateway", 7).is_empty());
}

#[test]
fn a_mapping_whose_private_pages_are_not_reported_is_kept() {
    let smaps = "\
5559d38f4000-5559d494d000 r-xp 0055b000 fd:01 1048633                    /opt/gw/gateway
Size:              16740 kB
Rss:                9096 kB
";
    assert!(droppable(smaps, "/opt/gw/gateway", 1_048_633).is_empty());
}

#[cfg(target_os = "linux")]
#[test]
fn the_code_pages_given_back_leave_the_rss_and_the_code_still_runs() {
    use std::os::unix::fs::MetadataExt as _;
    let resident = || {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let inode = std::fs::metadata("/proc/self/exe").unwrap().ino();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        droppable(&smaps, exe.to_str().unwrap(), inode)
            .iter()
            .map(|m| m.rss_kb)
            .sum::<u64>()
    };
    let before = resident();
    let released = release_startup_code().unwrap();
    assert!(released > 0, "nothing resident was dropped");
    let after = resident();
    assert!(
        after < before,
        "resident {before} KiB before, {after} KiB after"
    );
    // Code runs again from the pages mapped back.
    let mappings = parse(SMAPS);
    assert_eq!(mappings.len(), 8);
}
