//! Page frames: one anonymous memory mapping cut into fixed-size frames,
//! the buffer pool's page memory (PostgreSQL's `BufferBlocks`, one array
//! in its shared memory segment), optionally backed by transparent huge
//! pages.
//!
//! One mapping instead of one heap allocation per page keeps the pages
//! together, one cache line apart ([`STAGGER`]). With huge pages
//! (`buffer.huge_pages`, PostgreSQL's `huge_pages`) the whole pool is
//! covered by one TLB entry per 2 MB instead of 512: a probe of many
//! indexes, each page touched once, then stops missing the TLB on almost
//! every page. [`HugeArray`] does the same for an array of values (the
//! buffer descriptors).
//!
//! ```
//! let mut frames = turnstile_sync::frames::frames::<8192>(4, false).unwrap();
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

/// One cache line between consecutive frames. Frames at an exact 8 kB
/// stride put every page header (and every special space) in the same
/// few cache sets, so a scan touching the headers of a few thousand
/// pages evicts its own lines; one line of stagger spreads them over all
/// sets, as separate heap allocations did.
pub const STAGGER: usize = 64;

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
/// one fresh anonymous mapping, [`STAGGER`] bytes apart. With
/// `huge_pages` the first frame starts on a 2 MB boundary and the mapping
/// is advised `MADV_HUGEPAGE` — advice: a kernel without transparent huge
/// pages, or with them `never`, keeps 4 kB pages and the frames work the
/// same.
///
/// # Errors
/// The mapping's `io::Error` (`ENOMEM`), or `InvalidInput` for a zero
/// count, a size that is not a whole number of 4 kB pages, or a total
/// that overflows.
pub fn frames<const N: usize>(count: usize, huge_pages: bool) -> io::Result<Vec<Frame<N>>> {
    if count == 0 || N == 0 || N % 4096 != 0 {
        return Err(invalid("frames: the count must be positive and the size a multiple of 4096"));
    }
    let stride = N + STAGGER;
    let bytes = count.checked_mul(stride).ok_or_else(|| invalid("frames: the size overflows"))?;
    let (mapping, start) = Mapping::new(bytes, huge_pages)?;
    let mapping = Arc::new(mapping);
    let frames = (0..count)
        .map(|i| Frame {
            // SAFETY: `start + i * stride + N ≤ start + bytes ≤ len`: inside
            // the mapping (`[u8; N]` needs no alignment), not null.
            ptr: unsafe {
                NonNull::new_unchecked(mapping.base.as_ptr().byte_add(start + i * stride).cast::<[u8; N]>())
            },
            _mapping: Arc::clone(&mapping),
        })
        .collect();
    Ok(frames)
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_owned())
}

impl Mapping {
    /// A fresh zeroed mapping with `bytes` usable from the returned offset
    /// (a huge-page boundary, advised `MADV_HUGEPAGE`, when `huge_pages`).
    fn new(bytes: usize, huge_pages: bool) -> io::Result<(Mapping, usize)> {
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
        let mapping = Mapping { base, len };
        if !huge_pages {
            return Ok((mapping, 0));
        }
        let start = (HUGE_PAGE - base.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE;
        let advised = bytes.next_multiple_of(HUGE_PAGE).min(len - start);
        // Advice only: refused (no transparent huge pages), the mapping
        // keeps 4 kB pages.
        // SAFETY: advice on a range inside our own mapping; `MADV_HUGEPAGE`
        // changes how it is backed, never its contents.
        let _ =
            unsafe { rustix::mm::madvise(base.as_ptr().byte_add(start), advised, rustix::mm::Advice::LinuxHugepage) };
        Ok((mapping, start))
    }
}

/// A fixed-length array of `T` in its own mapping, optionally backed by
/// transparent huge pages: for a large array read at random, such as the
/// buffer descriptors, whose every access would otherwise miss the TLB.
/// Dereferences to `[T]`; drops its elements, then unmaps.
///
/// ```
/// let a = turnstile_sync::frames::HugeArray::new(1000, true, |i| i * 2).unwrap();
/// assert_eq!(a.len(), 1000);
/// assert_eq!(a[999], 1998);
/// ```
pub struct HugeArray<T> {
    ptr: NonNull<T>,
    len: usize,
    _mapping: Mapping,
}

// SAFETY: the array owns its elements, as a `Box<[T]>` does.
unsafe impl<T: Send> Send for HugeArray<T> {}
// SAFETY: `&HugeArray<T>` gives only `&T`s.
unsafe impl<T: Sync> Sync for HugeArray<T> {}

impl<T> HugeArray<T> {
    /// `len` elements, element `i` made by `init(i)`, with the huge-page
    /// advice when `huge_pages` (as [`frames`]).
    ///
    /// # Errors
    /// The mapping's `io::Error`, or `InvalidInput` for a zero length, an
    /// element aligned beyond 4096 bytes or a size that overflows.
    pub fn new(len: usize, huge_pages: bool, mut init: impl FnMut(usize) -> T) -> io::Result<HugeArray<T>> {
        if len == 0 || std::mem::align_of::<T>() > 4096 || std::mem::size_of::<T>() == 0 {
            return Err(invalid(
                "huge array: the length must be positive and the element sized and aligned to at most 4096",
            ));
        }
        let bytes =
            len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| invalid("huge array: the size overflows"))?;
        let (mapping, start) = Mapping::new(bytes, huge_pages)?;
        // SAFETY: `start` is inside the mapping and page-aligned, so aligned
        // for `T` (alignment ≤ 4096); not null.
        let ptr = unsafe { NonNull::new_unchecked(mapping.base.as_ptr().byte_add(start).cast::<T>()) };
        /// Drops the elements written so far if `init` panics.
        struct Partial<T> {
            ptr: NonNull<T>,
            done: usize,
        }
        impl<T> Drop for Partial<T> {
            fn drop(&mut self) {
                // SAFETY: the first `done` elements were written and not
                // yet handed to an array.
                unsafe { std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.done)) };
            }
        }
        let mut partial = Partial { ptr, done: 0 };
        for i in 0..len {
            // SAFETY: slot `i < len` is inside the mapping (`start + bytes ≤
            // len` of the mapping), aligned, and not yet written.
            unsafe { ptr.as_ptr().add(i).write(init(i)) };
            partial.done = i + 1;
        }
        std::mem::forget(partial);
        Ok(HugeArray { ptr, len, _mapping: mapping })
    }
}

impl<T> Deref for HugeArray<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements at `ptr`, alive as long as the
        // mapping, which `self` owns.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for HugeArray<T> {
    fn drop(&mut self) {
        // SAFETY: the elements are initialised and dropped once, here,
        // before the mapping (a later field) is unmapped.
        unsafe { std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len)) };
    }
}

impl<T: fmt::Debug> fmt::Debug for HugeArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HugeArray").field("len", &self.len).finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn frames_are_disjoint_zeroed_and_outlive_each_other() {
        let mut fs = frames::<8192>(3, false).unwrap();
        for (i, f) in fs.iter_mut().enumerate() {
            assert!(f.iter().all(|&b| b == 0));
            f.fill(i as u8 + 1);
        }
        let last = fs.pop().unwrap();
        drop(fs); // the mapping stays while a frame lives
        assert!(last.iter().all(|&b| b == 3));
        let a = last.as_ptr() as usize;
        assert_eq!(a % 64, 0);
    }

    #[test]
    fn huge_frames_start_on_a_huge_page_boundary() {
        let fs = frames::<8192>(300, true).unwrap();
        assert_eq!(fs[0].as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(fs[1].as_ptr() as usize - fs[0].as_ptr() as usize, 8192 + STAGGER);
    }

    #[test]
    fn a_huge_array_drops_its_elements_once() {
        let counter = Arc::new(());
        let a = HugeArray::new(5000, true, |_| Arc::clone(&counter)).unwrap();
        assert_eq!(Arc::strong_count(&counter), 5001);
        assert_eq!(a.as_ptr() as usize % HUGE_PAGE, 0);
        drop(a);
        assert_eq!(Arc::strong_count(&counter), 1);
        let r = std::panic::catch_unwind(|| {
            HugeArray::new(10, false, |i| if i == 7 { panic!("init failed") } else { Arc::clone(&counter) })
        });
        assert!(r.is_err());
        assert_eq!(Arc::strong_count(&counter), 1, "a failed init leaked its elements");
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert_eq!(frames::<8192>(0, false).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(frames::<100>(1, false).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(frames::<8192>(usize::MAX, false).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
