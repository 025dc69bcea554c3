//! Value types of configuration fields and their text form: the pure
//! `config-values` crate (fuzzed on its own, `fuzz/`), in its place in the
//! gateway.

pub use config_values::{
    parse_bool, parse_duration, render_duration, ByteSize, DebugMode, FieldKind, FieldValue,
};
