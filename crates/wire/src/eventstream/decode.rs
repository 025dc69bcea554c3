//! The incremental frame decoder over a `BytesMut`.
//!
//! Order of checks, each before any byte is consumed: prelude CRC, then
//! `total_length` against the 16-byte minimum and the size limit, then
//! `headers_length` against `total_length` (all from the 12-byte prelude, so an
//! oversize frame is refused before its body arrives), then, once the whole
//! frame is buffered, the message CRC and the whole headers block (every
//! length, type code and UTF-8 text, noting where the semantic headers are in
//! the same pass; a block equal to the previous frame's, as a stream's blocks
//! mostly are, is taken as checked). Only a frame that passes everything is
//! split off the buffer, and reading its headers later cannot fail. On error
//! the buffer is left as it was, so calling again returns the same error: a bad
//! stream cannot make progress.

use bytes::{Buf, BytesMut};

use super::block::BlockMemo;
use super::{EventStreamError, Frame, DEFAULT_MAX_FRAME, OVERHEAD, PRELUDE_LEN};

/// Splits a byte stream into verified [`Frame`]s.
#[derive(Debug, Clone)]
pub struct Decoder {
    max_frame: usize,
    /// A hasher in its initial state, cloned for each frame: `Hasher::new`
    /// detects the CPU's CRC instructions on every call (~37 instructions a
    /// frame), a clone only copies.
    fresh_crc: crc32fast::Hasher,
    /// The previous frame's headers block, checked ([`BlockMemo`]).
    last_block: BlockMemo,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder accepting frames of up to [`DEFAULT_MAX_FRAME`] bytes.
    pub fn new() -> Self {
        Decoder::with_max_frame(DEFAULT_MAX_FRAME)
    }

    /// A decoder accepting frames whose `total_length` is at most `max_frame`.
    pub fn with_max_frame(max_frame: usize) -> Self {
        Decoder {
            max_frame,
            fresh_crc: crc32fast::Hasher::new(),
            last_block: BlockMemo::default(),
        }
    }

    /// The largest `total_length` this decoder accepts.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Decode one whole frame from the front of `buf` if it is complete;
    /// `Ok(None)` when more bytes are needed (room for the rest of the frame is
    /// then reserved in `buf`).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, EventStreamError> {
        let Some(prelude) = buf.first_chunk::<PRELUDE_LEN>() else {
            return Ok(None);
        };
        let total_len = be_u32(prelude, 0) as usize;
        let headers_len = be_u32(prelude, 4) as usize;
        let prelude_crc = be_u32(prelude, 8);

        let mut hasher = self.fresh_crc.clone();
        hasher.update(&prelude[..8]);
        let actual = hasher.clone().finalize();
        if actual != prelude_crc {
            return Err(EventStreamError::PreludeCrc {
                expected: prelude_crc,
                actual,
            });
        }
        if total_len < OVERHEAD {
            return Err(EventStreamError::FrameTooSmall(total_len));
        }
        if total_len > self.max_frame {
            return Err(EventStreamError::FrameTooLarge {
                len: total_len,
                max: self.max_frame,
            });
        }
        if headers_len > total_len - OVERHEAD {
            return Err(EventStreamError::InvalidHeadersLength {
                headers_len,
                total_len,
            });
        }
        let Some(frame) = buf.get(..total_len) else {
            buf.reserve(total_len - buf.len());
            return Ok(None);
        };

        // In bounds from here on: frame.len() == total_len >= 16 and
        // headers_len <= total_len - 16, so 12 + headers_len <= crc_at.
        let crc_at = total_len - 4;
        hasher.update(&frame[8..crc_at]);
        let actual = hasher.finalize();
        let message_crc = be_u32(frame, crc_at);
        if actual != message_crc {
            return Err(EventStreamError::MessageCrc {
                expected: message_crc,
                actual,
            });
        }
        let payload_at = PRELUDE_LEN + headers_len;
        let semantic = self.last_block.validate(&frame[PRELUDE_LEN..payload_at])?;

        // Cut the split-off frame into headers block and payload before
        // freezing: no copy, and one new reference on the shared buffer (the
        // `split_off`) rather than one per `Bytes::slice`.
        let mut headers = buf.split_to(total_len);
        headers.truncate(crc_at);
        let payload = headers.split_off(payload_at);
        headers.advance(PRELUDE_LEN);
        Ok(Some(Frame::from_validated(
            headers.freeze(),
            payload.freeze(),
            semantic,
        )))
    }

    /// Call at end of input: returns the next buffered frame like [`Decoder::decode`],
    /// and errors with [`EventStreamError::TruncatedStream`] when only part of a
    /// frame remains.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, EventStreamError> {
        match self.decode(buf)? {
            Some(frame) => Ok(Some(frame)),
            None if buf.is_empty() => Ok(None),
            None => Err(EventStreamError::TruncatedStream {
                buffered: buf.len(),
            }),
        }
    }
}

/// Reads a big-endian `u32` at `at`; every caller has checked `at + 4 <= bytes.len()`.
fn be_u32(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_be_bytes)
}
