//! The 8 kB page: a small header, a line-pointer array growing up, item
//! data growing down, and a CRC32C checksum set on write and verified on
//! read.
//!
//! # Layout (little-endian)
//!
//! | bytes   | field      | meaning and invariant |
//! |---------|------------|-----------------------|
//! | 0..4    | `checksum` | CRC32C of bytes `4..PAGE_SIZE` followed by the block number (so a page written at the wrong offset fails too); set by [`set_checksum`] just before a write, checked by [`verify`] after a read |
//! | 4..6    | `version`  | [`PAGE_VERSION`]; a non-new page with another value is rejected |
//! | 6..8    | `flags`    | free for the access method |
//! | 8..10   | `lower`    | end of the line-pointer array: `HEADER_SIZE ≤ lower` |
//! | 10..12  | `upper`    | start of item data: `lower ≤ upper ≤ special` |
//! | 12..14  | `special`  | start of the special space: `special ≤ PAGE_SIZE` |
//! | 14..16  | reserved   | zero |
//! | 16..24  | `lsn`      | the end of the WAL record of the page's last logged change (PostgreSQL's `pd_lsn`): the buffer pool writes the page only once the WAL is durable up to it, and redo skips a record whose end is not past it |
//!
//! Free space is `upper - lower`. A line pointer is 4 bytes: offset `u16`,
//! length `u16`. The header is 24 bytes, PostgreSQL's size.
//!
//! A page of all zeros is a *new* page, as in PostgreSQL (`PageIsNew`):
//! extension by `fallocate` or zero writes creates them, and they verify
//! without a checksum; [`init`] makes one usable.
//!
//! ```
//! use turnstile_storage::page::{self, PageBuf, PAGE_SIZE};
//! let mut p: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
//! assert!(page::is_new(&p));
//! page::init(&mut p, 0);
//! let slot = page::add_item(&mut p, b"hello").unwrap();
//! assert_eq!(page::item(&p, slot), Some(&b"hello"[..]));
//! page::set_checksum(&mut p, 7);
//! assert!(page::verify(&p, 7).is_ok());
//! assert!(page::verify(&p, 8).is_err(), "the block number is part of the checksum");
//! ```

use crate::rel::BlockNumber;

/// Bytes in a page (PostgreSQL's `BLCKSZ`).
pub const PAGE_SIZE: usize = 8192;
/// Bytes of the page header.
pub const HEADER_SIZE: usize = 24;
/// Bytes of one line pointer.
pub const ITEM_ID_SIZE: usize = 4;
/// The layout version stamped by [`init`] (`"T2"`: the header with an
/// LSN; `"T1"` pages are refused).
pub const PAGE_VERSION: u16 = 0x5432;
/// The largest item [`add_item`] accepts on an empty page without special space.
pub const MAX_ITEM_SIZE: usize = PAGE_SIZE - HEADER_SIZE - ITEM_ID_SIZE;

/// One page's bytes.
pub type PageBuf = [u8; PAGE_SIZE];

const CHECKSUM: usize = 0;
const VERSION: usize = 4;
const FLAGS: usize = 6;
const LOWER: usize = 8;
const UPPER: usize = 10;
const SPECIAL: usize = 12;
const LSN: usize = 16;

const _: () = assert!(PAGE_SIZE <= u16::MAX as usize + 1, "offsets must fit in u16");
const _: () = assert!(HEADER_SIZE == LSN + 8, "header fields and their size disagree");

/// The decoded header of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageHeader {
    /// Stored checksum.
    pub checksum: u32,
    /// Layout version.
    pub version: u16,
    /// Access-method flags.
    pub flags: u16,
    /// End of the line-pointer array.
    pub lower: u16,
    /// Start of item data.
    pub upper: u16,
    /// Start of the special space.
    pub special: u16,
    /// End of the WAL record of the last logged change (0: none).
    pub lsn: u64,
}

/// Why a page failed [`verify`] (the caller adds relation, fork and block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyFailure {
    /// The stored checksum is not the computed one.
    Checksum {
        /// In the header.
        stored: u32,
        /// Of the contents.
        computed: u32,
    },
    /// The header breaks a layout invariant.
    Header(&'static str),
}

fn get_u16(page: &PageBuf, at: usize) -> u16 {
    u16::from_le_bytes([page[at], page[at + 1]])
}

fn put_u16(page: &mut PageBuf, at: usize, v: u16) {
    page[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// The page's header fields.
pub fn header(page: &PageBuf) -> PageHeader {
    PageHeader {
        checksum: u32::from_le_bytes([page[0], page[1], page[2], page[3]]),
        version: get_u16(page, VERSION),
        flags: get_u16(page, FLAGS),
        lower: get_u16(page, LOWER),
        upper: get_u16(page, UPPER),
        special: get_u16(page, SPECIAL),
        lsn: lsn(page),
    }
}

/// The end of the WAL record of the page's last logged change (0 for a
/// page no logged change has touched).
pub fn lsn(page: &PageBuf) -> u64 {
    u64::from_le_bytes(page[LSN..LSN + 8].try_into().expect("8 bytes"))
}

/// Stamps the end of the WAL record that logged the change just made
/// (the caller holds the page's content lock exclusive).
pub fn set_lsn(page: &mut PageBuf, lsn: u64) {
    page[LSN..LSN + 8].copy_from_slice(&lsn.to_le_bytes());
}

/// The header bytes a logged delta never carries: the checksum (set on
/// write) and the LSN (set by whoever logs the change).
pub const UNLOGGED_HEADER: [std::ops::Range<usize>; 2] = [CHECKSUM..CHECKSUM + 4, LSN..LSN + 8];

/// Whether the page is all zeros (never initialised).
pub fn is_new(page: &PageBuf) -> bool {
    page.chunks_exact(64).all(|c| c.iter().fold(0u8, |a, &b| a | b) == 0)
}

/// Makes `page` an empty page with `special_size` bytes of special space
/// at its end (zeroing everything else).
///
/// # Panics
/// If `special_size` leaves no room for the header (a programming error).
pub fn init(page: &mut PageBuf, special_size: usize) {
    assert!(special_size <= PAGE_SIZE - HEADER_SIZE, "special space of {special_size} bytes does not fit");
    page.fill(0);
    let special = (PAGE_SIZE - special_size) as u16;
    put_u16(page, VERSION, PAGE_VERSION);
    put_u16(page, LOWER, HEADER_SIZE as u16);
    // `upper` is stored as u16: PAGE_SIZE itself (8192) fits.
    put_u16(page, UPPER, special);
    put_u16(page, SPECIAL, special);
}

/// Header flag set by [`remove_items`] when it leaves unused line pointers
/// behind, cleared by [`add_item_reusing`] when none is left (PostgreSQL's
/// `PD_HAS_FREE_LINES`): inserts skip the search on pages without any.
/// The other flag bits are free for the access method.
pub const FLAG_HAS_FREE_LINES: u16 = 0x8000;

/// The page's flags (free for the access method, but
/// [`FLAG_HAS_FREE_LINES`]).
pub fn flags(page: &PageBuf) -> u16 {
    get_u16(page, FLAGS)
}

/// Sets the page's flags.
pub fn set_flags(page: &mut PageBuf, flags: u16) {
    put_u16(page, FLAGS, flags);
}

/// Bytes an item of any size could still take, after its line pointer
/// (PostgreSQL's `PageGetFreeSpace`); 0 for a new page.
pub fn free_space(page: &PageBuf) -> usize {
    let h = header(page);
    (h.upper as usize).saturating_sub(h.lower as usize).saturating_sub(ITEM_ID_SIZE)
}

/// Number of line pointers on the page.
pub fn item_count(page: &PageBuf) -> usize {
    (header(page).lower as usize).saturating_sub(HEADER_SIZE) / ITEM_ID_SIZE
}

/// Adds `data` as a new item and returns its slot, or `None` when it does
/// not fit (or the page is new).
pub fn add_item(page: &mut PageBuf, data: &[u8]) -> Option<usize> {
    if is_new_header(page) || data.len() > free_space(page) {
        return None;
    }
    let h = header(page);
    let slot = item_count(page);
    let upper = h.upper as usize - data.len();
    page[upper..upper + data.len()].copy_from_slice(data);
    let lp = h.lower as usize;
    put_u16(page, lp, upper as u16);
    put_u16(page, lp + 2, data.len() as u16);
    put_u16(page, LOWER, (lp + ITEM_ID_SIZE) as u16);
    put_u16(page, UPPER, upper as u16);
    Some(slot)
}

/// The bytes of item `slot`.
pub fn item(page: &PageBuf, slot: usize) -> Option<&[u8]> {
    if slot >= item_count(page) {
        return None;
    }
    let lp = HEADER_SIZE + slot * ITEM_ID_SIZE;
    let (off, len) = (get_u16(page, lp) as usize, get_u16(page, lp + 2) as usize);
    page.get(off..off + len)
}

/// The bytes of item `slot`, for an in-place change that keeps its size
/// (the caller holds the page's content lock exclusive).
pub fn item_mut(page: &mut PageBuf, slot: usize) -> Option<&mut [u8]> {
    if slot >= item_count(page) {
        return None;
    }
    let lp = HEADER_SIZE + slot * ITEM_ID_SIZE;
    let (off, len) = (get_u16(page, lp) as usize, get_u16(page, lp + 2) as usize);
    page.get_mut(off..off + len)
}

/// Whether line pointer `slot` is unused (no storage, free for
/// [`add_item_reusing`]); set by [`remove_items`].
pub fn item_unused(page: &PageBuf, slot: usize) -> bool {
    if slot >= item_count(page) {
        return false;
    }
    let lp = HEADER_SIZE + slot * ITEM_ID_SIZE;
    get_u16(page, lp) == 0 && get_u16(page, lp + 2) == 0
}

/// As [`add_item`], but reuses the first unused line pointer (left by
/// [`remove_items`]) if there is one, as PostgreSQL's `PageAddItem` does
/// for heap pages.
pub fn add_item_reusing(page: &mut PageBuf, data: &[u8]) -> Option<usize> {
    if is_new_header(page) || data.is_empty() {
        return None;
    }
    if flags(page) & FLAG_HAS_FREE_LINES == 0 {
        return add_item(page, data);
    }
    let Some(slot) = (0..item_count(page)).find(|&s| item_unused(page, s)) else {
        set_flags(page, flags(page) & !FLAG_HAS_FREE_LINES);
        return add_item(page, data);
    };
    let h = header(page);
    if data.len() > (h.upper as usize).saturating_sub(h.lower as usize) {
        return None;
    }
    let upper = h.upper as usize - data.len();
    page[upper..upper + data.len()].copy_from_slice(data);
    let lp = HEADER_SIZE + slot * ITEM_ID_SIZE;
    put_u16(page, lp, upper as u16);
    put_u16(page, lp + 2, data.len() as u16);
    put_u16(page, UPPER, upper as u16);
    Some(slot)
}

/// Replaces the bytes of item `slot` with `data`, keeping the slot (so a
/// heap TID stays valid). A smaller item is written in place; a larger
/// one takes new space, compacting the page first if needed. Returns
/// `false`, changing nothing, when it cannot fit on the page.
pub fn replace_item(page: &mut PageBuf, slot: usize, data: &[u8]) -> bool {
    if slot >= item_count(page) || item_unused(page, slot) || data.is_empty() {
        return false;
    }
    let lp = HEADER_SIZE + slot * ITEM_ID_SIZE;
    let (off, len) = (get_u16(page, lp) as usize, get_u16(page, lp + 2) as usize);
    if data.len() <= len {
        page[off..off + data.len()].copy_from_slice(data);
        put_u16(page, lp + 2, data.len() as u16);
        return true;
    }
    let h = header(page);
    if data.len() > (h.upper as usize).saturating_sub(h.lower as usize) {
        // Room only if the gaps left by earlier replacements, and this
        // item's own bytes, are given back first.
        let used: usize =
            (0..item_count(page)).filter(|&s| s != slot).filter_map(|s| item(page, s)).map(<[u8]>::len).sum();
        if h.lower as usize + used + data.len() > h.special as usize {
            return false;
        }
        put_u16(page, lp, 0);
        put_u16(page, lp + 2, 0);
        compact(page);
    }
    let h = header(page);
    let upper = h.upper as usize - data.len();
    page[upper..upper + data.len()].copy_from_slice(data);
    put_u16(page, lp, upper as u16);
    put_u16(page, lp + 2, data.len() as u16);
    put_u16(page, UPPER, upper as u16);
    true
}

/// Marks the line pointers `slots` unused and compacts the page: item data
/// is moved together at the end (PostgreSQL's `PageRepairFragmentation`),
/// so [`free_space`] counts the space given back. Slots keep their
/// numbers; trailing unused line pointers are dropped.
pub fn remove_items(page: &mut PageBuf, slots: &[usize]) {
    if is_new_header(page) {
        return;
    }
    let count = item_count(page);
    for &slot in slots.iter().filter(|&&s| s < count) {
        let lp = HEADER_SIZE + slot * ITEM_ID_SIZE;
        put_u16(page, lp, 0);
        put_u16(page, lp + 2, 0);
    }
    compact(page);
    let mut count = item_count(page);
    while count > 0 && item_unused(page, count - 1) {
        count -= 1;
    }
    put_u16(page, LOWER, (HEADER_SIZE + count * ITEM_ID_SIZE) as u16);
    if (0..count).any(|s| item_unused(page, s)) {
        set_flags(page, flags(page) | FLAG_HAS_FREE_LINES);
    }
}

/// Moves every item's bytes together at the end of the item area.
fn compact(page: &mut PageBuf) {
    let h = header(page);
    let mut items: Vec<(usize, Vec<u8>)> = (0..item_count(page))
        .filter(|&s| !item_unused(page, s))
        .filter_map(|s| item(page, s).map(|d| (s, d.to_vec())))
        .collect();
    // Highest offset first keeps the physical order (not needed, but tidy).
    items.sort_by_key(|(s, _)| std::cmp::Reverse(get_u16(page, HEADER_SIZE + s * ITEM_ID_SIZE)));
    let mut upper = h.special as usize;
    for (slot, data) in &items {
        upper -= data.len();
        page[upper..upper + data.len()].copy_from_slice(data);
        let lp = HEADER_SIZE + slot * ITEM_ID_SIZE;
        put_u16(page, lp, upper as u16);
    }
    page[h.lower as usize..upper].fill(0);
    put_u16(page, UPPER, upper as u16);
}

fn is_new_header(page: &PageBuf) -> bool {
    get_u16(page, VERSION) == 0
}

/// The checksum of `page` stored at `block`.
pub fn checksum(page: &PageBuf, block: BlockNumber) -> u32 {
    let crc = crc32c::crc32c(&page[CHECKSUM + 4..]);
    crc32c::crc32c_append(crc, &block.to_le_bytes())
}

/// Stamps the checksum of `page` as it will be stored at `block`. Called
/// on a private copy just before a write.
pub fn set_checksum(page: &mut PageBuf, block: BlockNumber) {
    let sum = checksum(page, block);
    page[CHECKSUM..CHECKSUM + 4].copy_from_slice(&sum.to_le_bytes());
}

/// Verifies a page just read from `block`: new (all-zero) pages pass; any
/// other page must carry the right checksum and a sane header.
pub fn verify(page: &PageBuf, block: BlockNumber) -> Result<(), VerifyFailure> {
    let h = header(page);
    if h.checksum == 0 && is_new(page) {
        return Ok(());
    }
    let computed = checksum(page, block);
    if computed != h.checksum {
        return Err(VerifyFailure::Checksum { stored: h.checksum, computed });
    }
    if h.version != PAGE_VERSION {
        return Err(VerifyFailure::Header("unknown page layout version"));
    }
    if (h.lower as usize) < HEADER_SIZE || h.lower > h.upper || h.upper > h.special {
        return Err(VerifyFailure::Header("lower, upper and special pointers are out of order"));
    }
    if h.special as usize > PAGE_SIZE {
        return Err(VerifyFailure::Header("special pointer past the end of the page"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Box<PageBuf> {
        Box::new([0; PAGE_SIZE])
    }

    #[test]
    fn replaced_and_removed_items_keep_their_slots_and_give_space_back() {
        let mut p = page();
        init(&mut p, 0);
        let slots: Vec<usize> = (0..40).map(|i| add_item(&mut p, &[i as u8; 150]).unwrap()).collect();
        let before = free_space(&p);
        assert!(replace_item(&mut p, slots[3], &[7; 100]), "a smaller item fits in place");
        assert_eq!(item(&p, slots[3]).unwrap(), &[7; 100][..]);
        assert_eq!(free_space(&p), before, "the gap is not counted before compaction");
        remove_items(&mut p, &[slots[5], slots[6], slots[39]]);
        assert!(item_unused(&p, slots[5]) && item_unused(&p, slots[6]));
        assert_eq!(item_count(&p), 39, "a trailing unused pointer is dropped");
        assert_eq!(free_space(&p), before + 50 + 300 + 150 + ITEM_ID_SIZE);
        for i in (0..39).filter(|i| ![3, 5, 6].contains(i)) {
            assert_eq!(item(&p, slots[i]).unwrap(), &[i as u8; 150][..], "slot {i} moved or changed");
        }
        assert_eq!(add_item_reusing(&mut p, b"reused"), Some(slots[5]));
        // Growing an item into the page's last bytes compacts first.
        let free = free_space(&p) + ITEM_ID_SIZE;
        assert!(!replace_item(&mut p, slots[0], &vec![1; 150 + free + 1]));
        assert!(replace_item(&mut p, slots[0], &vec![1; 150 + free]));
        assert_eq!(item(&p, slots[0]).unwrap().len(), 150 + free);
        assert_eq!(item(&p, slots[1]).unwrap(), &[1u8; 150][..]);
        assert_eq!(free_space(&p), 0);
        set_checksum(&mut p, 1);
        assert!(verify(&p, 1).is_ok());
    }

    #[test]
    fn items_fill_the_page_and_free_space_reaches_zero() {
        let mut p = page();
        init(&mut p, 16);
        let mut n = 0;
        while add_item(&mut p, &[n as u8; 100]).is_some() {
            n += 1;
        }
        assert_eq!(n, (PAGE_SIZE - HEADER_SIZE - 16) / 104);
        assert!(free_space(&p) < 100);
        for i in 0..n {
            assert_eq!(item(&p, i).unwrap(), &[i as u8; 100][..]);
        }
        let mut q = page();
        init(&mut q, 0);
        assert!(add_item(&mut q, &[1; MAX_ITEM_SIZE]).is_some());
        assert_eq!(free_space(&q), 0);
    }

    #[test]
    fn every_flipped_bit_is_caught() {
        let mut p = page();
        init(&mut p, 0);
        add_item(&mut p, b"payload").unwrap();
        set_checksum(&mut p, 3);
        verify(&p, 3).unwrap();
        for byte in [0, 5, 100, PAGE_SIZE - 1] {
            let mut q = p.clone();
            q[byte] ^= 0x10;
            assert!(matches!(verify(&q, 3), Err(VerifyFailure::Checksum { .. })), "byte {byte}");
        }
    }

    #[test]
    fn new_pages_verify_and_take_no_items() {
        let mut p = page();
        verify(&p, 0).unwrap();
        assert_eq!(free_space(&p), 0);
        assert!(add_item(&mut p, b"x").is_none());
    }

    #[test]
    fn a_bad_header_with_a_good_checksum_is_rejected() {
        let mut p = page();
        init(&mut p, 0);
        put_u16(&mut p, LOWER, 9000);
        set_checksum(&mut p, 0);
        assert!(matches!(verify(&p, 0), Err(VerifyFailure::Header(_))));
    }
}
