//! JSON helpers the codecs share: fast string literals and numbers
//! ([`write_str`], [`serialize_str`], [`write_uint`]; `escape.rs`) and
//! [`RawObject`], a JSON object kept as its members' raw text so that a relay
//! can rewrite one member and write the rest back byte for byte
//! (`raw_object.rs`).

mod escape;
mod raw_object;

pub use escape::{serialize_opt_str, serialize_str, write_str, write_uint};
pub use raw_object::RawObject;
