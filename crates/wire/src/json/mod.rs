//! JSON helpers the codecs share: fast string literals and numbers
//! ([`write_str`], [`write_str_parts`], [`serialize_str`], [`write_uint`];
//! `escape.rs`), a string assembled from pieces some of which were escaped
//! once for the whole process ([`Pieces`], [`Fixed`]; `pieces.rs`), and
//! [`RawObject`], a JSON object kept as its members' raw text so that a relay
//! can rewrite one member and write the rest back byte for byte
//! (`raw_object.rs`).

mod escape;
mod pieces;
mod raw_object;

pub use escape::{serialize_opt_str, serialize_str, write_str, write_str_parts, write_uint};
pub use pieces::{Fixed, Pieces};
pub use raw_object::RawObject;
