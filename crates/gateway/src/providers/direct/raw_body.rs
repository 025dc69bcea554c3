//! A client's JSON body as its top-level members, each value kept as the raw
//! text it arrived as. Native pass-through rewrites a member or two (`model`,
//! `stream_options`) and writes everything else back byte for byte: unknown
//! fields, number spellings and key order survive, with no `Value` round trip.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::GatewayError;

/// The members of a JSON object, in order.
#[derive(Debug)]
pub struct RawObject {
    members: Vec<(String, Box<RawValue>)>,
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = RawObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some((key, value)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((key, value));
                }
                Ok(RawObject { members })
            }
        }
        d.deserialize_map(Members)
    }
}

impl RawObject {
    /// Parse a body (already validated by the handler, so errors are rare).
    pub fn parse(body: &[u8]) -> Result<RawObject, GatewayError> {
        serde_json::from_slice(body)
            .map_err(|e| GatewayError::validation(format!("malformed JSON: {e}")))
    }

    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// Replace the value of `key` (in place), or append the member.
    pub fn set(&mut self, key: &str, value: &impl serde::Serialize) -> Result<(), GatewayError> {
        let raw = serde_json::value::to_raw_value(value).map_err(GatewayError::internal)?;
        match self.members.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = raw,
            None => self.members.push((key.to_owned(), raw)),
        }
        Ok(())
    }

    /// Drop every member named `key`.
    pub fn remove(&mut self, key: &str) {
        self.members.retain(|(k, _)| k != key);
    }

    /// `stream_options.include_usage = true`, keeping the object's other members.
    pub fn force_include_usage(&mut self) -> Result<(), GatewayError> {
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

    /// The object as compact JSON; values are written exactly as they were.
    pub fn to_bytes(&self) -> Result<bytes::Bytes, GatewayError> {
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
            serde_json::to_writer(&mut out, key).map_err(GatewayError::internal)?;
            out.push(b':');
            out.extend_from_slice(value.get().as_bytes());
        }
        out.push(b'}');
        Ok(bytes::Bytes::from(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_rewritten_member_changes() {
        let body = br#"{"model":"custom/llama3","messages":[{"role":"user","content":"hi \u00e9"}],"temperature":1.0e0,"x_vendor":{"a":[1,2.50]},"stream":true}"#;
        let mut obj = RawObject::parse(body).unwrap();
        obj.set("model", &"llama3").unwrap();
        let out = obj.to_bytes().unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"model":"llama3","messages":[{"role":"user","content":"hi \u00e9"}],"temperature":1.0e0,"x_vendor":{"a":[1,2.50]},"stream":true}"#
        );
    }

    #[test]
    fn usage_is_forced_and_other_options_kept() {
        let mut obj =
            RawObject::parse(br#"{"model":"m","stream_options":{"include_usage":false,"x":1}}"#)
                .unwrap();
        obj.force_include_usage().unwrap();
        assert_eq!(
            &obj.to_bytes().unwrap()[..],
            br#"{"model":"m","stream_options":{"include_usage":true,"x":1}}"#
        );
        let mut obj = RawObject::parse(br#"{"model":"m"}"#).unwrap();
        obj.force_include_usage().unwrap();
        assert_eq!(
            &obj.to_bytes().unwrap()[..],
            br#"{"model":"m","stream_options":{"include_usage":true}}"#
        );
        obj.remove("model");
        assert_eq!(
            &obj.to_bytes().unwrap()[..],
            br#"{"stream_options":{"include_usage":true}}"#
        );
    }

    #[test]
    fn keys_with_escapes_are_written_back_as_valid_json() {
        let obj = RawObject::parse(br#"{"a\"b":1,"\u00e9":2}"#).unwrap();
        let back: Value = serde_json::from_slice(&obj.to_bytes().unwrap()).unwrap();
        assert_eq!(back["a\"b"], 1);
        assert_eq!(back["é"], 2);
        assert!(RawObject::parse(b"[1]").is_err());
    }
}
