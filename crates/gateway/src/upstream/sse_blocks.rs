//! Cutting a provider's SSE byte stream into whole events, as raw bytes.
//!
//! Native pass-through forwards each event exactly as it arrived, so it needs
//! the event boundaries without decoding anything: a block runs up to and
//! including the blank line that ends it (line ends LF, CRLF or CR, as in
//! WHATWG). Comment-only blocks are blocks too. A CR at the very end of the
//! input waits for the next chunk, which may start with its LF.

use bytes::{Bytes, BytesMut};

/// Incremental splitter; feed chunks, take blocks.
#[derive(Debug)]
pub struct BlockSplitter {
    buf: BytesMut,
    /// Where scanning resumes (every byte before it is known).
    pos: usize,
    /// Start of the current line.
    line_start: usize,
    max_block: usize,
}

/// A block would exceed the size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("provider event larger than {0} bytes")]
pub struct BlockTooLarge(pub usize);

impl BlockSplitter {
    pub fn new(max_block: usize) -> Self {
        BlockSplitter {
            buf: BytesMut::with_capacity(8 * 1024),
            pos: 0,
            line_start: 0,
            max_block,
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The next whole block, `None` until more input arrives.
    pub fn next_block(&mut self) -> Result<Option<Bytes>, BlockTooLarge> {
        while let Some(at) = self
            .buf
            .get(self.pos..)
            .and_then(|rest| rest.iter().position(|&b| b == b'\n' || b == b'\r'))
        {
            let end = self.pos + at;
            let term = match self.buf.get(end) {
                Some(b'\r') => match self.buf.get(end + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    // Maybe CRLF split across chunks: wait.
                    None => return Ok(None),
                },
                _ => 1,
            };
            let empty_line = end == self.line_start;
            self.pos = end + term;
            self.line_start = self.pos;
            if empty_line {
                let block = self.buf.split_to(self.pos).freeze();
                self.pos = 0;
                self.line_start = 0;
                return Ok(Some(block));
            }
        }
        self.pos = self.buf.len();
        if self.buf.len() > self.max_block {
            return Err(BlockTooLarge(self.max_block));
        }
        Ok(None)
    }

    /// At end of input: whatever is left (an event missing its blank line, or
    /// a cut-off fragment). Check blocks with [`BlockSplitter::next_block`] first.
    pub fn take_rest(&mut self) -> Option<Bytes> {
        self.pos = 0;
        self.line_start = 0;
        (!self.buf.is_empty()).then(|| self.buf.split().freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(input: &[u8], chunk: usize) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
        let mut s = BlockSplitter::new(1 << 20);
        let mut blocks = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            s.feed(piece);
            while let Some(b) = s.next_block().unwrap() {
                blocks.push(b.to_vec());
            }
        }
        (blocks, s.take_rest().map(|b| b.to_vec()))
    }

    #[test]
    fn blocks_are_the_exact_bytes_at_any_chunking() {
        let input: &[u8] = b"event: a\ndata: 1\n\n: comment\n\ndata: x\r\ndata: y\r\n\r\nevent: b\rdata: 2\r\rdata: tail";
        let expected: Vec<&[u8]> = vec![
            b"event: a\ndata: 1\n\n",
            b": comment\n\n",
            b"data: x\r\ndata: y\r\n\r\n",
            b"event: b\rdata: 2\r\r",
        ];
        for chunk in 1..=input.len() {
            let (blocks, rest) = split_all(input, chunk);
            assert_eq!(blocks, expected, "chunk size {chunk}");
            assert_eq!(
                rest.as_deref(),
                Some(&b"data: tail"[..]),
                "chunk size {chunk}"
            );
        }
    }

    #[test]
    fn a_crlf_split_between_chunks_is_one_terminator() {
        let mut s = BlockSplitter::new(1024);
        s.feed(b"data: 1\r\n\r");
        assert_eq!(s.next_block().unwrap(), None);
        s.feed(b"\ndata: 2\n\n");
        assert_eq!(s.next_block().unwrap().unwrap(), &b"data: 1\r\n\r\n"[..]);
        assert_eq!(s.next_block().unwrap().unwrap(), &b"data: 2\n\n"[..]);
        assert_eq!(s.take_rest(), None);
    }

    #[test]
    fn an_endless_line_is_refused() {
        let mut s = BlockSplitter::new(16);
        s.feed(&[b'x'; 17]);
        assert_eq!(s.next_block(), Err(BlockTooLarge(16)));
    }
}
