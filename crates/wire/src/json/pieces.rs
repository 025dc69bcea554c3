//! A JSON string assembled from pieces ([`Pieces`]): text that is escaped
//! as it is written, and texts of the program's own ([`Fixed`]) whose
//! escaped form is worked out once for the whole process.
//!
//! The `primary` request's user message is mostly such text: the reasoning
//! prefix and the system prompt's additions are about 1.4 KB a request,
//! around a client prompt that is often a few words. Escaped anew each time
//! they cost about 4,500 instructions a request; written from their kept
//! escaped form, a copy.

use std::fmt;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::escape::{escape_into, serialize_literal, write_escaped_into};

/// A text of the program's own, for [`Pieces::push_fixed`]: its JSON
/// escaping is done at its first use and kept.
pub struct Fixed {
    text: &'static str,
    escaped: OnceLock<Box<str>>,
}

impl Fixed {
    /// For a `static`: nothing is escaped until the text is first written.
    pub const fn new(text: &'static str) -> Self {
        Fixed {
            text,
            escaped: OnceLock::new(),
        }
    }

    /// The text itself.
    pub fn text(&self) -> &'static str {
        self.text
    }

    /// The text escaped as inside a JSON string literal, without quotes.
    fn escaped(&self) -> &str {
        self.escaped.get_or_init(|| {
            let mut out = String::with_capacity(self.text.len() + self.text.len() / 8);
            escape_into(&mut out, self.text);
            out.into_boxed_str()
        })
    }
}

impl fmt::Debug for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Fixed").field(&self.text).finish()
    }
}

/// One string made of pieces, written as one JSON string literal. Equal to
/// another when their texts are equal, however they are cut; read back from
/// JSON as one piece.
#[derive(Clone, Default)]
pub struct Pieces {
    pieces: Vec<Piece>,
    len: usize,
}

#[derive(Clone)]
enum Piece {
    Text(String),
    Fixed(&'static Fixed),
}

impl Pieces {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends text of the caller's (escaped when written).
    pub fn push_str(&mut self, text: &str) {
        self.len += text.len();
        match self.pieces.last_mut() {
            Some(Piece::Text(last)) => last.push_str(text),
            _ => self.pieces.push(Piece::Text(text.to_owned())),
        }
    }

    /// Appends text of the caller's, taking it whole.
    pub fn push_string(&mut self, text: String) {
        self.len += text.len();
        match self.pieces.last_mut() {
            Some(Piece::Text(last)) => last.push_str(&text),
            _ => self.pieces.push(Piece::Text(text)),
        }
    }

    /// Appends a text of the program's own (written from its kept escape).
    pub fn push_fixed(&mut self, fixed: &'static Fixed) {
        self.len += fixed.text.len();
        self.pieces.push(Piece::Fixed(fixed));
    }

    /// Appends every piece of `other`.
    pub fn append(&mut self, other: Pieces) {
        for piece in other.pieces {
            match piece {
                Piece::Text(text) => self.push_string(text),
                Piece::Fixed(fixed) => self.push_fixed(fixed),
            }
        }
    }

    /// Bytes of the whole text.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends the whole text as one JSON string literal, quotes included:
    /// the bytes its `Serialize` has `serde_json` write, the fixed texts from
    /// their kept escapes, without serde in between.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => write_escaped_into(out, text),
                Piece::Fixed(fixed) => out.extend_from_slice(fixed.escaped().as_bytes()),
            }
        }
        out.push(b'"');
    }

    /// The whole text, joined.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.len);
        for piece in &self.pieces {
            out.push_str(match piece {
                Piece::Text(text) => text,
                Piece::Fixed(fixed) => fixed.text,
            });
        }
        out
    }
}

impl From<String> for Pieces {
    fn from(text: String) -> Self {
        let mut pieces = Pieces::new();
        pieces.push_string(text);
        pieces
    }
}

impl From<&str> for Pieces {
    fn from(text: &str) -> Self {
        let mut pieces = Pieces::new();
        pieces.push_str(text);
        pieces
    }
}

impl PartialEq for Pieces {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.to_text() == other.to_text()
    }
}

impl Eq for Pieces {}

impl fmt::Debug for Pieces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_text(), f)
    }
}

impl Serialize for Pieces {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_literal(serializer, self.len, |literal| {
            for piece in &self.pieces {
                match piece {
                    Piece::Text(text) => escape_into(literal, text),
                    Piece::Fixed(fixed) => literal.push_str(fixed.escaped()),
                }
            }
        })
    }
}

impl<'de> Deserialize<'de> for Pieces {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Pieces::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static QUOTED: Fixed = Fixed::new("a \"fixed\" text\nwith\tescapes \\ ");
    static PLAIN: Fixed = Fixed::new("plain");

    fn json(p: &Pieces) -> String {
        serde_json::to_string(p).unwrap()
    }

    #[test]
    fn pieces_write_as_their_joined_text_would() {
        let mut p = Pieces::new();
        p.push_fixed(&QUOTED);
        p.push_str("client \"text\"\n");
        p.push_string("more é 日本\u{1}".to_owned());
        p.push_fixed(&PLAIN);
        p.push_fixed(&QUOTED);
        let text = p.to_text();
        assert_eq!(p.len(), text.len());
        assert_eq!(json(&p), serde_json::to_string(&text).unwrap());
        let mut written = Vec::new();
        p.write_json(&mut written);
        assert_eq!(written, json(&p).into_bytes());
        // Twice: the second time from the kept escapes.
        assert_eq!(json(&p), serde_json::to_string(&text).unwrap());
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            serde_json::Value::String(text.clone())
        );
        let back: Pieces = serde_json::from_str(&json(&p)).unwrap();
        assert_eq!(back, p, "equal by text, however cut");
        assert_eq!(back.to_text(), text);
    }

    #[test]
    fn empty_and_appended() {
        let empty = Pieces::new();
        assert!(empty.is_empty());
        assert_eq!(json(&empty), "\"\"");
        let mut a = Pieces::from("one ");
        let mut b = Pieces::new();
        b.push_fixed(&PLAIN);
        b.push_str(" two");
        a.append(b);
        assert_eq!(a.to_text(), "one plain two");
        assert_eq!(a.len(), "one plain two".len());
        assert_eq!(QUOTED.text(), "a \"fixed\" text\nwith\tescapes \\ ");
    }

    proptest! {
        #[test]
        fn any_cut_writes_like_serde_json(parts in prop::collection::vec((any::<String>(), any::<bool>()), 0..6)) {
            let mut p = Pieces::new();
            for (text, fixed) in &parts {
                if *fixed {
                    p.push_fixed(&QUOTED);
                }
                p.push_str(text);
            }
            let text = p.to_text();
            prop_assert_eq!(p.len(), text.len());
            prop_assert_eq!(json(&p), serde_json::to_string(&text).unwrap());
            let mut written = b"[".to_vec();
            p.write_json(&mut written);
            prop_assert_eq!(written, format!("[{}", json(&p)).into_bytes());
        }
    }
}
