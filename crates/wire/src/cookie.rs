//! The `Cookie` request header (RFC 6265 5.4): `name=value` pairs separated
//! by `;`. Read leniently, as browsers send it: whitespace around a pair or
//! a value is ignored, as are double quotes around a value, and a piece
//! without `=` is skipped. The UI API reads its session, CSRF and sign-in
//! flow cookies with [`find`].

/// The value of the first cookie called `name` in one `Cookie` header's
/// text; a slice of `header`, never containing `;`.
pub fn find<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim().trim_matches('"'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_spaces_and_quotes() {
        let h = "a=1; gw_session=abc ;csrf_token=\"x\"; flag; b = 2";
        assert_eq!(find(h, "gw_session"), Some("abc"));
        assert_eq!(find(h, "csrf_token"), Some("x"));
        assert_eq!(find(h, "a"), Some("1"));
        assert_eq!(find(h, "flag"), None, "a piece without = is no cookie");
        assert_eq!(find(h, "gw"), None);
        assert_eq!(find(h, "b "), Some("2"), "names are exact");
        assert_eq!(find("x=1; x=2", "x"), Some("1"), "the first one wins");
        assert_eq!(find("x=", "x"), Some(""));
        assert_eq!(find("", "x"), None);
    }
}
