//! A log field that is a whole number of tenths (the access line's
//! `latency_ms`, rounded to 0.1 ms) written without float formatting.
//!
//! Core's `{:?}` of an `f64` and `serde_json`'s number writer each cost
//! about 800 instructions a value (the shortest-digits search, and for the
//! live log stream a `String` as well); the access line's latency went
//! through both on every request. A value of whole tenths is written as its
//! integer part, a point and one digit, which is what both print for it.

/// Below this the doubles are far denser than tenths (their spacing is at
/// most 2^-12), so the double nearest to `n.d` has `n.d` as its one
/// shortest decimal form. About 31 years in milliseconds.
const LIMIT: f64 = 1e12;

/// `value` as its integer part and tenths digit, when it is the double
/// nearest to a whole number of tenths from 0 up to [`LIMIT`]; `None` for
/// anything else (-0.0, fractions finer than a tenth, NaN, infinities),
/// which the caller formats as it did before.
fn as_tenths(value: f64) -> Option<(u64, u8)> {
    if !(value.is_sign_positive() && value < LIMIT) {
        return None;
    }
    let tenths = (value * 10.0).round();
    if tenths / 10.0 != value {
        return None;
    }
    // Whole, non-negative and below 10^13: exact as an integer.
    let tenths = tenths as u64;
    Some((tenths / 10, (tenths % 10) as u8))
}

/// `value` as `{:?}` and `serde_json` print it, written into `buf`, when
/// [`as_tenths`] accepts it (at most 13 digits, a point and a digit).
pub(super) fn text(value: f64, buf: &mut [u8; 24]) -> Option<&str> {
    let (whole, tenth) = as_tenths(value)?;
    let mut digits = itoa::Buffer::new();
    let whole = digits.format(whole).as_bytes();
    let out = buf.get_mut(..whole.len() + 2)?;
    let (int, point_and_digit) = out.split_at_mut(whole.len());
    int.copy_from_slice(whole);
    point_and_digit.copy_from_slice(&[b'.', b'0' + tenth]);
    std::str::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    fn text(value: f64) -> Option<String> {
        super::text(value, &mut [0; 24]).map(str::to_owned)
    }

    #[test]
    fn whole_tenths_print_as_debug_and_serde_json_print_them() {
        // Every latency up to 20 s, as the access line rounds it.
        for n in 0..200_000u64 {
            let value = (n as f64 / 10.0 * 10.0).round() / 10.0;
            let got = text(value).unwrap_or_else(|| panic!("{value} refused"));
            assert_eq!(got, format!("{value:?}"));
            assert_eq!(got, serde_json::to_string(&value).unwrap());
        }
    }

    #[test]
    fn large_whole_tenths_too() {
        for n in [
            123_456_789_012u64,
            9_999_999_999_999,
            1_000_000_000_000,
            4_503_599_627_370,
        ] {
            let value = n as f64 / 10.0;
            assert_eq!(text(value).unwrap(), format!("{value:?}"));
        }
    }

    #[test]
    fn anything_else_is_left_to_the_caller() {
        for value in [
            -0.0,
            -1.5,
            0.25,
            0.123,
            1e-7,
            1e12,
            1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(text(value), None, "{value:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn what_it_accepts_it_prints_as_debug_does(bits: u64, tenths in 0u64..10_000_000_000_000) {
            for value in [f64::from_bits(bits), tenths as f64 / 10.0] {
                if let Some(got) = text(value) {
                    proptest::prop_assert_eq!(got, format!("{value:?}"));
                }
            }
        }
    }
}
