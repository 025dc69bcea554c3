//! A JSON object as its top-level members, each value kept as the raw text it
//! arrived as. Native pass-through rewrites a member or two (`model`,
//! `stream_options`) and writes everything else back byte for byte: unknown
//! fields, number spellings, escapes and key order survive, with no `Value`
//! round trip.
//!
//! Values (and keys without escapes) are borrowed from the parsed body;
//! only a member that is set is owned.

use std::borrow::Cow;

use bytes::Bytes;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::write_str;

/// The members of a JSON object, in order (repeated keys kept as they are).
#[derive(Debug, Clone)]
pub struct RawObject<'a> {
    members: Vec<(Cow<'a, str>, Cow<'a, RawValue>)>,
}

impl<'de> Deserialize<'de> for RawObject<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    members.push((key, Cow::Borrowed(value)));
                }
                Ok(RawObject { members })
            }
        }
        d.deserialize_map(Members)
    }
}

/// A member name: borrowed when the input holds it without escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'a> RawObject<'a> {
    /// Reads a JSON object (anything else is an error), borrowing from `body`.
    pub fn parse(body: &'a [u8]) -> Result<RawObject<'a>, serde_json::Error> {
        serde_json::from_slice(body)
    }

    /// The raw value of the first member named `key`.
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// Replace the value of `key` (in place), or append the member.
    pub fn set(&mut self, key: &str, value: &impl Serialize) -> Result<(), serde_json::Error> {
        let raw = Cow::Owned(serde_json::value::to_raw_value(value)?);
        match self.members.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = raw,
            None => self.members.push((Cow::Owned(key.to_owned()), raw)),
        }
        Ok(())
    }

    /// Drop every member named `key`.
    pub fn remove(&mut self, key: &str) {
        self.members.retain(|(k, _)| k != key);
    }

    /// `stream_options.include_usage = true`, keeping the object's other
    /// members (a `stream_options` that is not an object is replaced).
    pub fn force_include_usage(&mut self) -> Result<(), serde_json::Error> {
        let mut options = match self.get("stream_options") {
            Some(raw) => match serde_json::from_str::<Value>(raw.get()) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            },
            None => Map::new(),
        };
        if options.get("include_usage") == Some(&Value::Bool(true)) {
            return Ok(());
        }
        options.insert("include_usage".to_owned(), Value::Bool(true));
        self.set("stream_options", &options)
    }

    /// The object as compact JSON; values are written exactly as they were,
    /// keys as `serde_json` writes strings.
    pub fn to_bytes(&self) -> Bytes {
        let size: usize = self
            .members
            .iter()
            .map(|(k, v)| k.len() + v.get().len() + 4)
            .sum();
        let mut out = Vec::with_capacity(size + 2);
        out.push(b'{');
        for (i, (key, value)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(&mut out, key);
            out.push(b':');
            out.extend_from_slice(value.get().as_bytes());
        }
        out.push(b'}');
        Bytes::from(out)
    }
}

#[cfg(test)]
#[path = "raw_object_tests.rs"]
mod tests;
