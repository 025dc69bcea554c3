//! The web console's files, embedded by `build.rs` from `web/dist` with
//! their brotli and gzip forms and an ETag each, and the choice of the form
//! a request accepts.

/// One file of the built console.
#[derive(Debug)]
pub(crate) struct Asset {
    /// Path under `/_ui/` (`index.html`, `assets/index-3f2a1b.js`).
    pub path: &'static str,
    pub content_type: &'static str,
    /// Strong ETag: a hash of the content, quoted.
    pub etag: &'static str,
    pub raw: &'static [u8],
    pub brotli: Option<&'static [u8]>,
    pub gzip: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/console_assets.rs"));

/// Whether the binary was built with the console.
pub(crate) fn built() -> bool {
    !ASSETS.is_empty()
}

/// The file at `path` (relative to `/_ui/`) in `table` (sorted by path).
pub(crate) fn find(table: &'static [Asset], path: &str) -> Option<&'static Asset> {
    table
        .binary_search_by(|a| a.path.cmp(path))
        .ok()
        .and_then(|i| table.get(i))
}

/// A content coding of a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Brotli,
    Gzip,
    Identity,
}

impl Coding {
    pub(crate) fn header(self) -> Option<&'static str> {
        match self {
            Coding::Brotli => Some("br"),
            Coding::Gzip => Some("gzip"),
            Coding::Identity => None,
        }
    }
}

/// The body of `asset` in the best coding `accept_encoding` allows
/// (brotli, then gzip; a coding with `q=0` is refused).
pub(crate) fn negotiate(asset: &Asset, accept_encoding: &str) -> (Coding, &'static [u8]) {
    let accepts = |name: &str| {
        accept_encoding.split(',').any(|part| {
            let mut pieces = part.split(';');
            let coding = pieces.next().unwrap_or_default().trim();
            let refused = pieces.any(|p| {
                let p = p.trim();
                p.strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            coding.eq_ignore_ascii_case(name) && !refused
        })
    };
    match (asset.brotli, asset.gzip) {
        (Some(br), _) if accepts("br") => (Coding::Brotli, br),
        (_, Some(gz)) if accepts("gzip") => (Coding::Gzip, gz),
        _ => (Coding::Identity, asset.raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SAMPLE: Asset = Asset {
        path: "assets/app.js",
        content_type: "text/javascript; charset=utf-8",
        etag: "\"abc\"",
        raw: b"raw",
        brotli: Some(b"br"),
        gzip: Some(b"gz"),
    };

    #[test]
    fn the_best_accepted_coding_is_chosen() {
        assert_eq!(negotiate(&SAMPLE, "gzip, deflate, br").0, Coding::Brotli);
        assert_eq!(negotiate(&SAMPLE, "gzip").0, Coding::Gzip);
        assert_eq!(negotiate(&SAMPLE, "br;q=0, gzip;q=0.5").0, Coding::Gzip);
        assert_eq!(negotiate(&SAMPLE, "identity").0, Coding::Identity);
        assert_eq!(negotiate(&SAMPLE, "").1, b"raw");
        let plain = Asset {
            brotli: None,
            gzip: None,
            ..SAMPLE
        };
        assert_eq!(negotiate(&plain, "br, gzip").0, Coding::Identity);
    }

    #[test]
    fn the_table_is_sorted_for_lookups() {
        assert!(ASSETS.windows(2).all(|w| w[0].path < w[1].path));
        if built() {
            assert!(find(ASSETS, "index.html").is_some());
        }
    }
}
