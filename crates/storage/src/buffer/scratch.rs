//! Before-images of pages being changed: page-sized boxes kept per thread
//! and reused, so that a logged change costs a copy, not an allocation.

use crate::page::{PageBuf, PAGE_SIZE};
use std::cell::RefCell;

/// Boxes a thread keeps: a B-tree split changes three pages at once.
const KEEP: usize = 8;

thread_local! {
    static FREE: RefCell<Vec<Box<PageBuf>>> = const { RefCell::new(Vec::new()) };
}

/// A page-sized box (its contents are whatever it held last).
pub(super) fn take() -> Box<PageBuf> {
    FREE.with(|f| f.borrow_mut().pop()).unwrap_or_else(|| Box::new([0; PAGE_SIZE]))
}

/// Gives a box back for reuse.
pub(super) fn give(b: Box<PageBuf>) {
    FREE.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() < KEEP {
            f.push(b);
        }
    });
}
