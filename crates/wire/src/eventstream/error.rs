//! The one error type of the event-stream codec.
//!
//! Every malformed input maps to a variant here; the decoder never panics and
//! never skips bytes silently. A checksum or framing error means the stream can
//! no longer be trusted, so callers must end the stream on any of them.

/// What went wrong while decoding (or, for [`super::try_encode`], encoding) a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventStreamError {
    /// The CRC32 of the first 8 bytes does not match the stored prelude CRC.
    #[error(
        "event-stream prelude CRC mismatch: frame says {expected:#010x}, bytes give {actual:#010x}"
    )]
    PreludeCrc { expected: u32, actual: u32 },
    /// The CRC32 of the whole frame (minus its last 4 bytes) does not match the stored one.
    #[error(
        "event-stream message CRC mismatch: frame says {expected:#010x}, bytes give {actual:#010x}"
    )]
    MessageCrc { expected: u32, actual: u32 },
    /// The frame's `total_length` is above the decoder's limit (or, when encoding, above `u32::MAX`).
    #[error("event-stream frame of {len} bytes exceeds the limit of {max} bytes")]
    FrameTooLarge { len: usize, max: usize },
    /// The frame's `total_length` is below the 16 bytes of fixed overhead.
    #[error("event-stream frame length {0} is below the 16-byte minimum")]
    FrameTooSmall(usize),
    /// `headers_length` does not fit inside `total_length - 16`.
    #[error(
        "event-stream headers length {headers_len} does not fit in a frame of {total_len} bytes"
    )]
    InvalidHeadersLength {
        headers_len: usize,
        total_len: usize,
    },
    /// A header could not be parsed (or encoded); the text says which and why.
    #[error("invalid event-stream header: {0}")]
    InvalidHeader(String),
    /// A semantic header (`:message-type`, `:event-type`, ...) is absent.
    #[error("event-stream frame lacks the {0} header")]
    MissingHeader(&'static str),
    /// A semantic header is present but is not a string.
    #[error("event-stream header {0} is not a string")]
    HeaderNotString(&'static str),
    /// `:message-type` is neither `event`, `exception` nor `error`.
    #[error("unknown event-stream message type {0:?}")]
    UnknownMessageType(String),
    /// The input ended with part of a frame still buffered.
    #[error("event stream ended inside a frame ({buffered} bytes buffered)")]
    TruncatedStream { buffered: usize },
}
