//! [`PageStore`]: what the buffer pool needs from below it. [`crate::Smgr`]
//! is the real one; the loom models use an in-memory store so the pin and
//! eviction handshake is checked without file I/O.

use crate::error::Result;
use crate::page::PageBuf;
use crate::rel::{BlockNumber, BufferTag, Fork, RelFileId};

/// Block storage under the buffer pool.
pub trait PageStore: Send + Sync + std::fmt::Debug {
    /// Reads the block `tag` into `page` (raw bytes, unverified).
    fn read_page(&self, tag: BufferTag, page: &mut PageBuf) -> Result<()>;
    /// Writes `pages` over consecutive existing blocks starting at `first`.
    fn write_pages(&self, first: BufferTag, pages: &[&PageBuf]) -> Result<()>;
    /// The fork's length in blocks.
    fn nblocks(&self, rel: RelFileId, fork: Fork) -> Result<BlockNumber>;
    /// The fork's length as the file system reports it (PostgreSQL's
    /// `mdnblocks`, an `lseek` of the last segment), which extension reads
    /// under the extension lock. Defaults to [`PageStore::nblocks`].
    fn nblocks_from_files(&self, rel: RelFileId, fork: Fork) -> Result<BlockNumber> {
        self.nblocks(rel, fork)
    }
    /// Grows the fork by `n` zero blocks; returns the first new block.
    fn extend(&self, rel: RelFileId, fork: Fork, n: u32) -> Result<BlockNumber>;
    /// Makes every write so far durable.
    fn sync_all(&self) -> Result<()>;
    /// The file holding `tag`, for error messages.
    fn file_name(&self, tag: BufferTag) -> String;
}
