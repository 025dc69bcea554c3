//! The UI API's `Cookie` header reading (`wire::cookie`): any header text
//! and name give a value or none without a panic; a value is a slice of
//! the header without `;` and without quotes at either end; a cookie put
//! after any text in which its name is absent is found with its value.
//!
//! Input: `name \0 value \0 header text` (missing parts are empty).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::cookie;

fn is_slice_of(part: &str, whole: &str) -> bool {
    let (p, w) = (part.as_ptr() as usize, whole.as_ptr() as usize);
    p >= w && p + part.len() <= w + whole.len()
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let (name, value, header) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    for wanted in [name, "gw_session", "csrf_token", "gw_sso_flow"] {
        if let Some(found) = cookie::find(header, wanted) {
            assert!(is_slice_of(found, header));
            assert!(!found.contains(';'));
            assert!(!found.starts_with('"') && !found.ends_with('"'));
        }
    }
    // A name and value as the gateway writes them (a token, cookie octets).
    let is_token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b))
    };
    let is_octets = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_graphic() && !b"\",;\\".contains(&b))
    };
    if is_token(name) && is_octets(value) && cookie::find(header, name).is_none() {
        for glue in ["; ", ";", " ;  "] {
            let whole = format!("{header}{glue}{name}={value}");
            assert_eq!(cookie::find(&whole, name), Some(value), "{whole:?}");
        }
    }
});
