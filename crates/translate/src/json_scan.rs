//! A small, strict JSON reader for hand-written fast paths.
//!
//! A fast path reads the shapes it knows with a [`Cursor`] and gives up
//! (`None`) on anything else: a syntax error, an escaped key, a number that
//! is not a plain unsigned integer, nesting deeper than [`MAX_DEPTH`]. The
//! caller then parses the same text with serde_json, so giving up is always
//! safe and only costs time. The reverse must never happen: whatever the
//! cursor accepts, serde_json accepts too, with the same values, also
//! where serde_json reads a skipped member in full (an internally tagged
//! enum buffers its members). So it is stricter than serde_json, never
//! looser: control characters in strings, leading zeros, lone surrogates
//! and numbers that might not fit an `f64` are refused even in values it
//! skips.

use std::borrow::Cow;

/// Nesting a skipped value may have before the fast path gives up.
const MAX_DEPTH: u32 = 64;

/// Digits before the point of a skipped number without an exponent (below
/// 10^300, far inside an `f64`'s range).
const MAX_INT_DIGITS: usize = 300;

/// The same with an exponent (of at most two digits: below 10^(200+99)).
const MAX_INT_DIGITS_WITH_EXPONENT: usize = 200;

/// A position in a JSON text.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The next byte after whitespace, not consumed.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        // Compact JSON, the usual case: no whitespace at all.
        let b = *self.bytes().get(self.pos)?;
        if b > b' ' {
            return Some(b);
        }
        while let Some(&b) = self.bytes().get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// Consumes `byte` if it comes next (after whitespace).
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Consumes `null` if it comes next.
    pub(crate) fn null(&mut self) -> bool {
        self.literal(b"null")
    }

    /// Consumes `word` if it comes next (after whitespace).
    fn literal(&mut self, word: &[u8]) -> bool {
        self.peek().is_some() && self.literal_here(word)
    }

    /// An object member's key and its colon, as bytes (matched against
    /// byte literals: no UTF-8 boundary checks). `None` for a key with
    /// escapes (serde_json would match it unescaped; the fast path does not
    /// try).
    // Inlined into each object reader (measured: 2-4 % of a stream's parse;
    // the call's register saves cost as much as a short key's scan).
    #[inline(always)]
    pub(crate) fn key(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        let len = self.plain_run();
        let bytes = self.bytes();
        if bytes.get(start + len) != Some(&b'"') {
            return None;
        }
        self.pos = start + len + 1;
        let key = bytes.get(start..start + len)?;
        self.eat(b':').then_some(key)
    }

    /// Bytes from the position up to the first `"`, `\` or control
    /// character (or the end).
    fn plain_run(&self) -> usize {
        let rest = self.bytes().get(self.pos..).unwrap_or_default();
        // Eight bytes at a time, and the words may run past the string's
        // end (into the rest of the text): only the first special byte
        // counts, and the closing quote is one. Bytes at a time only in
        // the text's last seven bytes.
        let mut len = 0;
        while let Some(word) = rest.get(len..len + 8) {
            let Ok(word) = <[u8; 8]>::try_from(word) else {
                break;
            };
            let found = special_bytes(u64::from_le_bytes(word));
            if found != 0 {
                return len + (found.trailing_zeros() / 8) as usize;
            }
            len += 8;
        }
        let tail = rest.get(len..).unwrap_or_default();
        len + tail
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(tail.len())
    }

    /// A string value, unescaped; borrowed when it has no escapes.
    pub(crate) fn string(&mut self) -> Option<Cow<'a, str>> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        let len = self.plain_run();
        self.pos = start + len;
        match self.bytes().get(self.pos) {
            Some(b'"') => {
                self.pos += 1;
                self.text.get(start..start + len).map(Cow::Borrowed)
            }
            Some(b'\\') => {
                let mut owned = String::with_capacity(len + 16);
                owned.push_str(self.text.get(start..start + len)?);
                self.unescape_into(&mut owned)?;
                Some(Cow::Owned(owned))
            }
            _ => None,
        }
    }

    /// An optional string: `null` is `None`.
    pub(crate) fn opt_string(&mut self) -> Option<Option<String>> {
        if self.null() {
            return Some(None);
        }
        self.string().map(|s| Some(s.into_owned()))
    }

    /// The rest of a string whose first escape is at the position; appends
    /// the decoded text to `out` and consumes the closing quote.
    fn unescape_into(&mut self, out: &mut String) -> Option<()> {
        loop {
            match self.bytes().get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' => out.push(self.escape()?),
                _ => {
                    let start = self.pos;
                    let len = self.plain_run();
                    if len == 0 {
                        return None; // a control character
                    }
                    out.push_str(self.text.get(start..start + len)?);
                    self.pos += len;
                }
            }
        }
    }

    /// The character of the escape at the position (its backslash
    /// included), consumed; `None` for an escape JSON does not have.
    fn escape(&mut self) -> Option<char> {
        let escaped = *self.bytes().get(self.pos + 1)?;
        self.pos += 2;
        Some(match escaped {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => return None,
        })
    }

    /// The character of a `\u` escape whose `\u` is consumed; a surrogate
    /// pair is read whole, a lone surrogate gives up.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        if !(0xD800..0xE000).contains(&first) {
            return char::from_u32(first);
        }
        if first >= 0xDC00 || !self.literal_here(b"\\u") {
            return None;
        }
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return None;
        }
        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    }

    /// Consumes `word` if it comes next, whitespace not skipped.
    fn literal_here(&mut self, word: &[u8]) -> bool {
        if self
            .bytes()
            .get(self.pos..)
            .is_some_and(|r| r.starts_with(word))
        {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes().get(self.pos..self.pos + 4)?;
        let mut value = 0;
        for &d in digits {
            value = value * 16 + char::from(d).to_digit(16)?;
        }
        self.pos += 4;
        Some(value)
    }

    /// An unsigned integer that fits a `u32`, written plainly (no sign,
    /// fraction, exponent or leading zero).
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.peek()?;
        let rest = self.bytes().get(self.pos..)?;
        let len = rest
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        let digits = rest.get(..len)?;
        if len == 0 || (len > 1 && digits.first() == Some(&b'0')) {
            return None;
        }
        if matches!(rest.get(len), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let mut value: u32 = 0;
        for &d in digits {
            value = value.checked_mul(10)?.checked_add(u32::from(d - b'0'))?;
        }
        self.pos += len;
        Some(value)
    }

    /// Skips one value of any kind, checking its syntax as serde_json does.
    pub(crate) fn skip_value(&mut self) -> Option<()> {
        self.skip_nested(0)
    }

    /// Skips one value and returns its text, to be read later with a
    /// cursor of its own (when how to read it depends on a later member).
    pub(crate) fn value_text(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.pos;
        self.skip_value()?;
        self.text.get(start..self.pos)
    }

    fn skip_nested(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => {
                self.pos += 1;
                if self.eat(b'}') {
                    return Some(());
                }
                loop {
                    self.skip_string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    self.skip_nested(depth + 1)?;
                    if !self.eat(b',') {
                        return self.eat(b'}').then_some(());
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                if self.eat(b']') {
                    return Some(());
                }
                loop {
                    self.skip_nested(depth + 1)?;
                    if !self.eat(b',') {
                        return self.eat(b']').then_some(());
                    }
                }
            }
            b't' => self.literal(b"true").then_some(()),
            b'f' => self.literal(b"false").then_some(()),
            b'n' => self.null().then_some(()),
            _ => self.skip_number(),
        }
    }

    /// A string's syntax, without decoding it. A `\u` escape must be four
    /// hex digits, and a surrogate must be half of a pair: serde_json lets a
    /// lone one pass in a value it skips, but where it keeps the value for
    /// later (an internally tagged enum buffers its members) it decodes the
    /// string and refuses it (the fuzzer found it).
    fn skip_string(&mut self) -> Option<()> {
        if !self.eat(b'"') {
            return None;
        }
        loop {
            self.pos += self.plain_run();
            match self.bytes().get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' => {
                    self.escape()?;
                }
                _ => return None, // a control character
            }
        }
    }

    /// A number's syntax: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`,
    /// and a size that surely fits an `f64`: at most [`MAX_INT_DIGITS`]
    /// digits before the point, and with an exponent at most
    /// [`MAX_INT_DIGITS_WITH_EXPONENT`] of them and an exponent of two
    /// digits. serde_json only checks a skipped number's syntax, but where
    /// it keeps the value for later (an internally tagged enum buffers its
    /// members) it reads it as a number and refuses one out of range, so
    /// the fast path gives up on those (the fuzzer found it).
    fn skip_number(&mut self) -> Option<()> {
        self.literal_here(b"-");
        let int_digits = match self.bytes().get(self.pos)? {
            b'0' => {
                self.pos += 1;
                1
            }
            b'1'..=b'9' => self.skip_digits(),
            _ => return None,
        };
        if int_digits > MAX_INT_DIGITS {
            return None;
        }
        if self.literal_here(b".") && self.skip_digits() == 0 {
            return None;
        }
        if matches!(self.bytes().get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.bytes().get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            let exponent_digits = self.skip_digits();
            if exponent_digits == 0
                || exponent_digits > 2
                || int_digits > MAX_INT_DIGITS_WITH_EXPONENT
            {
                return None;
            }
        }
        Some(())
    }

    fn skip_digits(&mut self) -> usize {
        let rest = self.bytes().get(self.pos..).unwrap_or_default();
        let len = rest
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        self.pos += len;
        len
    }

    /// Reads an object member by member: `member` gets each key with the
    /// cursor at its value and must consume the value.
    pub(crate) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>,
    ) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let key = self.key()?;
            member(self, key)?;
            if !self.eat(b',') {
                return self.eat(b'}').then_some(());
            }
        }
    }

    /// Reads an array element by element: `element` must consume each one.
    pub(crate) fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(());
        }
        loop {
            element(self)?;
            if !self.eat(b',') {
                return self.eat(b']').then_some(());
            }
        }
    }
}

/// Bytes with only the low bit set, and with only the high bit set.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is `"`, `\` or below 0x20.
/// Bytes above the first such byte may be flagged wrongly (a borrow
/// carries into them); the lowest flagged byte is always right, and it is
/// the only one [`Cursor::plain_run`] reads.
fn special_bytes(word: u64) -> u64 {
    let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    zero_in(word ^ (ONES * u64::from(b'"')))
        | zero_in(word ^ (ONES * u64::from(b'\\')))
        | below_space
}

/// Whether the fast path `scan` reads `data` as serde_json reads it into
/// `T`, wherever it answers at all (for the fuzz target, through
/// [`crate::fast_paths_agree`]); `Err` names `what` with both readings.
pub(crate) fn agrees<'a, T>(
    what: &str,
    data: &'a str,
    scan: impl FnOnce(&'a str) -> Option<T>,
) -> Result<(), String>
where
    T: PartialEq + std::fmt::Debug + serde::Deserialize<'a>,
{
    let Some(fast) = scan(data) else {
        return Ok(());
    };
    match serde_json::from_str::<T>(data) {
        Ok(slow) if slow == fast => Ok(()),
        slow => Err(format!("{what}: fast {fast:?}, serde {slow:?}")),
    }
}

/// Known keys an object has shown, to give up on a repeated one (serde's
/// derived structs refuse a duplicate field).
#[derive(Default)]
pub(crate) struct Seen(u32);

impl Seen {
    /// Notes field `bit`; `None` when it was already seen.
    pub(crate) fn first(&mut self, bit: u32) -> Option<()> {
        let mask = 1 << bit;
        if self.0 & mask != 0 {
            return None;
        }
        self.0 |= mask;
        Some(())
    }
}

#[cfg(test)]
#[path = "json_scan_tests.rs"]
pub(crate) mod tests;
