//! Deserialization helper for the format's "string or array" fields.
//!
//! `serde(untagged)` would do, but it reports every failure as "did not match
//! any variant"; visiting the value ourselves keeps the inner error and its path
//! (e.g. `messages[0].content[1].source`).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};

/// A field given either as a plain string or as an array of `T`.
pub(crate) enum StrOrVec<T> {
    Str(String),
    Vec(Vec<T>),
}

/// Reads a string or an array of `T`; `expecting` names the accepted shapes.
pub(crate) fn str_or_vec<'de, D, T>(d: D, expecting: &'static str) -> Result<StrOrVec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_any(StrOrVecVisitor {
        expecting,
        marker: PhantomData,
    })
}

struct StrOrVecVisitor<T> {
    expecting: &'static str,
    marker: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for StrOrVecVisitor<T> {
    type Value = StrOrVec<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(StrOrVec::Str(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(StrOrVec::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // The hint comes from the input; cap it so a hostile hint cannot
        // reserve memory the elements never fill.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(256));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(StrOrVec::Vec(items))
    }
}
