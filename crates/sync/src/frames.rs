//! Page frames: one anonymous memory mapping cut into fixed-size frames,
//! the buffer pool's page memory (PostgreSQL's `BufferBlocks`, one array
//! in its shared memory segment), optionally backed by transparent huge
//! pages.
//!
//! One mapping instead of one heap allocation per page keeps the pages
//! contiguous and 8 kB-aligned, so each page spans exactly two 4 kB pages
//! of the MMU. With huge pages (`buffer.huge_pages`, PostgreSQL's
//! `huge_pages`) the whole pool is covered by one TLB entry per 2 MB
//! instead of 512: a probe of many indexes, each page touched once, then
//! stops missing the TLB on almost every page.
//!
//! ```
//! let (mut frames, _huge) = turnstile_sync::frames::frames::<8192>(4, false).unwrap();
//! assert_eq!(frames.len(), 4);
//! assert!(frames[0].iter().all(|&b| b == 0)); // fresh frames are zeroed
//! frames[3][8191] = 7;
//! assert_eq!(frames[3][8191], 7);
//! ```

use std::ffi::c_void;
use std::fmt;
use std::io;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;

/// The huge-page size (x86-64, aarch64 with 4 kB base pages).
pub const HUGE_PAGE: usize = 2 << 20;

/// An anonymous private mapping, unmapped when the last frame drops.
struct Mapping {
    base: NonNull<c_void>,
    len: usize,
}

// SAFETY: a mapping is plain memory owned by whoever holds the `Arc`; the
// frames cut from it are disjoint, and only a frame touches its bytes.
unsafe impl Send for Mapping {}
// SAFETY: `Mapping` itself is never read or written through `&self`.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what `mmap` returned; every frame
        // (the only references into it) held an `Arc` to this mapping, so
        // none is left.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr(), self.len) };
    }
}

/// One `N`-byte frame of a mapping: owns its bytes, dereferences to
/// `[u8; N]`, keeps the mapping alive.
pub struct Frame<const N: usize> {
    ptr: NonNull<[u8; N]>,
    _mapping: Arc<Mapping>,
}

// SAFETY: a frame is the only handle to its bytes (frames never overlap),
// like a `Box<[u8; N]>`.
unsafe impl<const N: usize> Send for Frame<N> {}
// SAFETY: `&Frame` gives only `&[u8; N]`; mutation needs `&mut Frame`.
unsafe impl<const N: usize> Sync for Frame<N> {}

impl<const N: usize> Deref for Frame<N> {
    type Target = [u8; N];
    #[inline]
    fn deref(&self) -> &[u8; N] {
        // SAFETY: `ptr` is aligned, inside the live mapping (we hold an
        // `Arc` to it), and no other frame covers these bytes.
        unsafe { self.ptr.as_ref() }
    }
}

impl<const N: usize> DerefMut for Frame<N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8; N] {
        // SAFETY: as in `deref`; `&mut self` makes this the only access.
        unsafe { self.ptr.as_mut() }
    }
}

impl<const N: usize> fmt::Debug for Frame<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Frame<{N}>@{:p}", self.ptr)
    }
}

/// `count` zeroed frames of `N` bytes (`N` a multiple of 4096), cut from
/// one fresh anonymous mapping. With `huge_pages` the frames start on a
/// 2 MB boundary and the mapping is advised `MADV_HUGEPAGE`; the second
/// value says whether the kernel took the advice (it refuses when
/// transparent huge pages are compiled out; with them `never` it accepts
/// and keeps 4 kB pages).
///
/// # Errors
/// The mapping's `io::Error` (`ENOMEM`), or `InvalidInput` for a zero
/// count, a size that is not a whole number of 4 kB pages, or a total
/// that overflows.
pub fn frames<const N: usize>(count: usize, huge_pages: bool) -> io::Result<(Vec<Frame<N>>, bool)> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_owned());
    if count == 0 || N == 0 || N % 4096 != 0 {
        return Err(invalid("frames: the count must be positive and the size a multiple of 4096"));
    }
    let bytes = count.checked_mul(N).ok_or_else(|| invalid("frames: the size overflows"))?;
    // Room to start on a huge-page boundary.
    let slack = if huge_pages { HUGE_PAGE } else { 0 };
    let len = bytes.checked_add(slack).ok_or_else(|| invalid("frames: the size overflows"))?;
    // SAFETY: a fresh private anonymous mapping chosen by the kernel
    // aliases nothing.
    let base = unsafe {
        rustix::mm::mmap_anonymous(
            std::ptr::null_mut(),
            len,
            rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
            rustix::mm::MapFlags::PRIVATE,
        )
    }?;
    let base = NonNull::new(base).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
    let mapping = Arc::new(Mapping { base, len });
    let offset = (HUGE_PAGE - base.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE;
    let start = if huge_pages { offset } else { 0 };
    let mut huge = false;
    if huge_pages {
        let advised = bytes.next_multiple_of(HUGE_PAGE).min(len - start);
        // SAFETY: advice on a range inside our own mapping; `MADV_HUGEPAGE`
        // changes how it is backed, never its contents.
        huge =
            unsafe { rustix::mm::madvise(base.as_ptr().byte_add(start), advised, rustix::mm::Advice::LinuxHugepage) }
                .is_ok();
    }
    let frames = (0..count)
        .map(|i| Frame {
            // SAFETY: `start + (i + 1) * N ≤ start + bytes ≤ len`: inside the
            // mapping, 4096-aligned (so aligned for `[u8; N]`), not null.
            ptr: unsafe { NonNull::new_unchecked(base.as_ptr().byte_add(start + i * N).cast::<[u8; N]>()) },
            _mapping: Arc::clone(&mapping),
        })
        .collect();
    Ok((frames, huge))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn frames_are_disjoint_zeroed_and_outlive_each_other() {
        let (mut fs, _) = frames::<8192>(3, false).unwrap();
        for (i, f) in fs.iter_mut().enumerate() {
            assert!(f.iter().all(|&b| b == 0));
            f.fill(i as u8 + 1);
        }
        let last = fs.pop().unwrap();
        drop(fs); // the mapping stays while a frame lives
        assert!(last.iter().all(|&b| b == 3));
        let a = last.as_ptr() as usize;
        assert_eq!(a % 4096, 0);
    }

    #[test]
    fn huge_frames_start_on_a_huge_page_boundary() {
        let (fs, _) = frames::<8192>(300, true).unwrap();
        assert_eq!(fs[0].as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(fs[1].as_ptr() as usize - fs[0].as_ptr() as usize, 8192);
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert_eq!(frames::<8192>(0, false).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(frames::<100>(1, false).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(frames::<8192>(usize::MAX, false).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
