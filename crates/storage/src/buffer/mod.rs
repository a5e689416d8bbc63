//! The shared buffer pool (DESIGN.md §5): descriptors, the partitioned
//! mapping table, clock-sweep victim selection, rings, pins.

pub mod clock;
pub mod desc;
pub(crate) mod mapping;
pub mod pool;
pub mod ring;

pub use desc::BufferId;
pub use pool::{BufferPool, BufferPoolStats, PageReadGuard, PageWriteGuard, PinnedBuffer, PoolOptions};
pub use ring::Ring;
