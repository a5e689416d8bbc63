//! The B-tree page: the storage page format (`turnstile_storage::page`)
//! with a 16-byte special space, a high key in slot 0, and entries sorted
//! by `memcmp` from slot 1.
//!
//! # Layout
//!
//! | where | what | invariant |
//! |---|---|---|
//! | header (16 B) | storage page header: checksum, version, flags, `lower`, `upper`, `special` | `special = PAGE_SIZE − SPECIAL_SIZE` |
//! | slot 0 | the **high key** | empty on a rightmost page (meaning +∞), else `∀ entries e on the page: e < high key` |
//! | slots 1.. | the entries, strictly increasing bytewise | leaf: `key ‖ tid`; inner: `child: u32 LE ‖ separator` |
//! | special +0 | magic `"TBT1"` (u32 LE) | every tree page and the metapage carry it |
//! | special +4 | right link (u32 LE) | `NO_BLOCK` on the rightmost page of a level |
//! | special +8 | level (u16 LE) | 0 for leaves, parent level = child level + 1 |
//! | special +10 | flags (u16 LE) | [`FLAG_META`], [`FLAG_LEFTMOST`] |
//! | special +12 | reserved | zero |
//!
//! On an inner page, entry `i` is a downlink: child `c_i` holds the keys
//! `k` with `sep_i ≤ k < sep_{i+1}` (and `< high key` for the last). The
//! first entry's separator is empty — *minus infinity*, which `memcmp`
//! already sorts before every key — as in PostgreSQL, where the first data
//! key of an inner page is truncated: the page's low bound is its left
//! sibling's high key, so storing it again would be redundant.
//!
//! The storage page format has no "insert at position" or "rebuild", so
//! this module adds them ([`insert_at`], [`build`]) on top of the
//! documented header offsets.

use turnstile_storage::page::{self, PageBuf, HEADER_SIZE, ITEM_ID_SIZE, PAGE_SIZE};
use turnstile_storage::BlockNumber;

/// Bytes of the B-tree special space.
pub const SPECIAL_SIZE: usize = 16;
/// The magic number at the start of the special space (`"TBT1"`).
pub const MAGIC: u32 = u32::from_le_bytes(*b"TBT1");
/// "No block": the right link of a rightmost page.
pub const NO_BLOCK: BlockNumber = u32::MAX;
/// Flag: the metapage (block 0).
pub const FLAG_META: u16 = 1 << 0;
/// Flag: the leftmost page of its level (it has no left sibling, so it is
/// the root if it is also rightmost).
pub const FLAG_LEFTMOST: u16 = 1 << 1;
/// Bytes usable by line pointers and items on a B-tree page.
pub const USABLE: usize = PAGE_SIZE - HEADER_SIZE - SPECIAL_SIZE;
/// The largest leaf entry: a third of a page, so that a split always
/// finds a point where both halves (each with a high key) fit — the same
/// limit PostgreSQL puts on index tuples. Inner entries add 4 bytes.
pub const MAX_ENTRY: usize = USABLE / 3 - 2 * ITEM_ID_SIZE - 4;
/// Bytes an inner entry adds to its separator (the child block).
pub const DOWNLINK_SIZE: usize = 4;

// Storage page header offsets (documented in `turnstile_storage::page`).
const LOWER: usize = 8;
const UPPER: usize = 10;
const SPECIAL: usize = PAGE_SIZE - SPECIAL_SIZE;

// A split must leave each half with at least one entry plus a high key:
// three maximal inner entries (high key, two downlinks) fit on a page.
const _: () = assert!(3 * (MAX_ENTRY + DOWNLINK_SIZE + ITEM_ID_SIZE) <= USABLE, "split halves must fit");

/// What the special space says about a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opaque {
    /// The right sibling, `None` on the rightmost page of a level.
    pub right: Option<BlockNumber>,
    /// 0 for leaves.
    pub level: u16,
    /// [`FLAG_META`], [`FLAG_LEFTMOST`].
    pub flags: u16,
}

impl Opaque {
    /// Whether the page has no right sibling.
    pub fn is_rightmost(&self) -> bool {
        self.right.is_none()
    }

    /// Whether the page has no left sibling.
    pub fn is_leftmost(&self) -> bool {
        self.flags & FLAG_LEFTMOST != 0
    }

    /// Whether the page is a leaf.
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }
}

/// Why a page is not a valid B-tree page (the caller names index and block).
pub type Bad = &'static str;

fn get_u16(p: &PageBuf, at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}

fn put_u16(p: &mut PageBuf, at: usize, v: u16) {
    p[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(p: &PageBuf, at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// Writes the special space of an already initialised page.
fn put_opaque(p: &mut PageBuf, op: Opaque) {
    p[SPECIAL..SPECIAL + 4].copy_from_slice(&MAGIC.to_le_bytes());
    p[SPECIAL + 4..SPECIAL + 8].copy_from_slice(&op.right.unwrap_or(NO_BLOCK).to_le_bytes());
    put_u16(p, SPECIAL + 8, op.level);
    put_u16(p, SPECIAL + 10, op.flags);
    p[SPECIAL + 12..PAGE_SIZE].fill(0);
}

/// Checks the header and special space and returns the latter: what is
/// verified on every page the tree locks (entries are bounds-checked as
/// they are read).
pub fn opaque(p: &PageBuf) -> Result<Opaque, Bad> {
    if page::is_new(p) {
        return Err("page is new (all zeros)");
    }
    let h = page::header(p);
    if h.special as usize != SPECIAL {
        return Err("special space is not the B-tree's size");
    }
    if (h.lower as usize) < HEADER_SIZE + ITEM_ID_SIZE || h.lower > h.upper || h.upper > h.special {
        return Err("line-pointer bounds are impossible (no high-key slot, or lower > upper > special)");
    }
    if get_u32(p, SPECIAL) != MAGIC {
        return Err("bad B-tree magic number in the special space");
    }
    let right = get_u32(p, SPECIAL + 4);
    let op = Opaque {
        right: (right != NO_BLOCK).then_some(right),
        level: get_u16(p, SPECIAL + 8),
        flags: get_u16(p, SPECIAL + 10),
    };
    if op.flags & !(FLAG_META | FLAG_LEFTMOST) != 0 {
        return Err("unknown flags in the special space");
    }
    Ok(op)
}

/// Like [`opaque`], for a page of the tree proper (not the metapage).
pub fn tree_opaque(p: &PageBuf) -> Result<Opaque, Bad> {
    let op = opaque(p)?;
    if op.flags & FLAG_META != 0 {
        return Err("the metapage where a tree page was expected");
    }
    Ok(op)
}

/// Number of entries (slots after the high key).
pub fn count(p: &PageBuf) -> usize {
    page::item_count(p).saturating_sub(1)
}

/// Entry `i` (slot `i + 1`).
pub fn entry(p: &PageBuf, i: usize) -> Result<&[u8], Bad> {
    page::item(p, i + 1).ok_or("a line pointer points outside the page")
}

/// The high key, `None` on a rightmost page.
pub fn high_key<'a>(p: &'a PageBuf, op: &Opaque) -> Result<Option<&'a [u8]>, Bad> {
    if op.is_rightmost() {
        return Ok(None);
    }
    page::item(p, 0).map(Some).ok_or("the high-key line pointer points outside the page")
}

/// Whether `probe` belongs to a page to the right of this one
/// (`probe ≥ high key`): the L&Y move-right test.
pub fn beyond_high_key(p: &PageBuf, op: &Opaque, probe: &[u8]) -> Result<bool, Bad> {
    Ok(high_key(p, op)?.is_some_and(|hk| probe >= hk))
}

/// Leaf: the first entry `≥ probe` (the number of entries if none).
pub fn lower_bound(p: &PageBuf, probe: &[u8]) -> Result<usize, Bad> {
    let (mut lo, mut hi) = (0, count(p));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if entry(p, mid)? < probe {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Leaf: [`lower_bound`], but on a rightmost page it first compares
/// `probe` with the last entry, and on a leftmost page with the first. A
/// probe beyond the index's key range — what every partition but one sees
/// when a query probes each partition's index — then costs one entry
/// instead of a binary search (`btree.edge_precheck`). The answer is the
/// same: the two checks are the search's own end cases, true on any page.
pub fn lower_bound_at_edges(p: &PageBuf, op: &Opaque, probe: &[u8]) -> Result<usize, Bad> {
    let n = count(p);
    if n > 0 {
        if op.is_rightmost() && entry(p, n - 1)? < probe {
            return Ok(n);
        }
        if op.flags & FLAG_LEFTMOST != 0 && entry(p, 0)? >= probe {
            return Ok(0);
        }
    }
    lower_bound(p, probe)
}

/// Splits an inner entry into child and separator.
pub fn downlink(e: &[u8]) -> Result<(BlockNumber, &[u8]), Bad> {
    let (child, sep) = e.split_first_chunk::<4>().ok_or("an inner entry is too short to hold a downlink")?;
    Ok((u32::from_le_bytes(*child), sep))
}

/// An inner entry.
pub fn inner_entry(child: BlockNumber, separator: &[u8]) -> Vec<u8> {
    let mut e = Vec::with_capacity(DOWNLINK_SIZE + separator.len());
    e.extend_from_slice(&child.to_le_bytes());
    e.extend_from_slice(separator);
    e
}

/// Inner: the index of the last downlink whose separator is `≤ probe`
/// (the child whose key range holds `probe`), and that child.
pub fn child_for(p: &PageBuf, probe: &[u8]) -> Result<(usize, BlockNumber), Bad> {
    let n = count(p);
    if n == 0 {
        return Err("an inner page without downlinks");
    }
    // First index whose separator is > probe; the first separator is
    // empty (−∞), so the answer is ≥ 1.
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if downlink(entry(p, mid)?)?.1 <= probe {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if lo == 0 {
        return Err("the first separator of an inner page is not minus infinity");
    }
    Ok((lo - 1, downlink(entry(p, lo - 1)?)?.0))
}

/// Bytes of free space for one more entry (after its line pointer).
pub fn free_space(p: &PageBuf) -> usize {
    page::free_space(p)
}

/// Bytes an entry takes on a page, line pointer included.
pub fn footprint(len: usize) -> usize {
    len + ITEM_ID_SIZE
}

/// Inserts `data` as entry `i` (shifting the later ones); `false` when it
/// does not fit.
pub fn insert_at(p: &mut PageBuf, i: usize, data: &[u8]) -> bool {
    let h = page::header(p);
    let slots = page::item_count(p);
    let slot = i + 1;
    assert!(slot <= slots, "insert position {i} past the {} entries", slots - 1);
    if data.len() > page::free_space(p) {
        return false;
    }
    let upper = h.upper as usize - data.len();
    p[upper..upper + data.len()].copy_from_slice(data);
    let at = HEADER_SIZE + slot * ITEM_ID_SIZE;
    let lower = h.lower as usize;
    p.copy_within(at..lower, at + ITEM_ID_SIZE);
    put_u16(p, at, upper as u16);
    put_u16(p, at + 2, data.len() as u16);
    put_u16(p, LOWER, (lower + ITEM_ID_SIZE) as u16);
    put_u16(p, UPPER, upper as u16);
    true
}

/// Makes `p` a B-tree page with `op`, `high_key` (`None` = rightmost;
/// must agree with `op.right`) and `entries` in order. Returns `false`
/// when they do not fit (nothing useful is left in `p` then).
pub fn build<'e>(
    p: &mut PageBuf,
    op: Opaque,
    high_key: Option<&[u8]>,
    entries: impl IntoIterator<Item = &'e [u8]>,
) -> bool {
    assert_eq!(high_key.is_none(), op.right.is_none(), "a page has a high key iff it has a right sibling");
    page::init(p, SPECIAL_SIZE);
    put_opaque(p, op);
    if page::add_item(p, high_key.unwrap_or(&[])).is_none() {
        return false;
    }
    entries.into_iter().all(|e| page::add_item(p, e).is_some())
}

/// Bytes `entries` plus a high key of `high_key_len` would occupy.
pub fn space_needed<'e>(high_key_len: usize, entries: impl IntoIterator<Item = &'e [u8]>) -> usize {
    footprint(high_key_len) + entries.into_iter().map(|e| footprint(e.len())).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> Box<PageBuf> {
        Box::new([0; PAGE_SIZE])
    }

    #[test]
    fn insert_at_keeps_order_and_the_page_verifies() {
        let mut p = fresh();
        let op = Opaque { right: Some(9), level: 0, flags: 0 };
        assert!(build(&mut p, op, Some(b"zz"), [&b"b"[..], b"d"]));
        assert!(insert_at(&mut p, 0, b"a"));
        assert!(insert_at(&mut p, 2, b"c"));
        assert!(insert_at(&mut p, 4, b"e"));
        let got: Vec<&[u8]> = (0..count(&p)).map(|i| entry(&p, i).unwrap()).collect();
        assert_eq!(got, [&b"a"[..], b"b", b"c", b"d", b"e"]);
        assert_eq!(opaque(&p).unwrap(), op);
        assert_eq!(high_key(&p, &op).unwrap(), Some(&b"zz"[..]));
        assert_eq!(lower_bound(&p, b"c").unwrap(), 2);
        assert_eq!(lower_bound(&p, b"cc").unwrap(), 3);
        assert_eq!(lower_bound(&p, b"zzz").unwrap(), 5);
        assert!(beyond_high_key(&p, &op, b"zz").unwrap() && !beyond_high_key(&p, &op, b"z").unwrap());
        page::set_checksum(&mut p, 3);
        page::verify(&p, 3).unwrap();
    }

    #[test]
    fn the_edge_precheck_answers_as_the_binary_search() {
        let keys: Vec<[u8; 2]> = (0..40u8).map(|i| [b'b', b'a' + i * 2]).collect();
        for flags in [0, FLAG_LEFTMOST] {
            for right in [None, Some(7)] {
                let op = Opaque { right, level: 0, flags };
                let mut p = fresh();
                let high = right.map(|_| &b"c"[..]);
                assert!(build(&mut p, op, high, keys.iter().map(|k| &k[..])));
                let mut probes: Vec<Vec<u8>> = vec![vec![], b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
                probes.extend((0..100u8).map(|i| vec![b'b', b'a' + i]));
                for probe in &probes {
                    assert_eq!(
                        lower_bound_at_edges(&p, &op, probe).unwrap(),
                        lower_bound(&p, probe).unwrap(),
                        "probe {probe:?}, {op:?}"
                    );
                }
            }
        }
        let op = Opaque { right: None, level: 0, flags: FLAG_LEFTMOST };
        let mut empty = fresh();
        assert!(build(&mut empty, op, None, std::iter::empty::<&[u8]>()));
        assert_eq!(lower_bound_at_edges(&empty, &op, b"x").unwrap(), 0);
    }

    #[test]
    fn a_full_page_refuses_and_inner_search_picks_the_covering_child() {
        let mut p = fresh();
        let op = Opaque { right: None, level: 1, flags: FLAG_LEFTMOST };
        let entries = [inner_entry(10, b""), inner_entry(11, b"m"), inner_entry(12, b"t")];
        assert!(build(&mut p, op, None, entries.iter().map(Vec::as_slice)));
        assert_eq!(child_for(&p, b"a").unwrap(), (0, 10));
        assert_eq!(child_for(&p, b"m").unwrap(), (1, 11));
        assert_eq!(child_for(&p, b"s").unwrap(), (1, 11));
        assert_eq!(child_for(&p, b"zz").unwrap(), (2, 12));
        let big = vec![7u8; MAX_ENTRY];
        let mut n = 0;
        loop {
            let end = count(&p);
            if !insert_at(&mut p, end, &big) {
                break;
            }
            n += 1;
        }
        assert!(n >= 2, "two maximal entries fit on a page");
        assert!(free_space(&p) < MAX_ENTRY);
    }

    #[test]
    fn impossible_pages_are_named_not_trusted() {
        let mut p = fresh();
        assert!(opaque(&p).is_err(), "new page");
        page::init(&mut p, 0);
        assert!(opaque(&p).is_err(), "no special space");
        let mut q = fresh();
        assert!(build(&mut q, Opaque { right: None, level: 0, flags: 0 }, None, []));
        q[SPECIAL] ^= 1;
        assert_eq!(opaque(&q), Err("bad B-tree magic number in the special space"));
        let mut r = fresh();
        assert!(build(&mut r, Opaque { right: None, level: 1, flags: 0 }, None, [&b"ab"[..]]));
        put_u16(&mut r, HEADER_SIZE + ITEM_ID_SIZE, 8190);
        put_u16(&mut r, HEADER_SIZE + ITEM_ID_SIZE + 2, 100);
        assert!(entry(&r, 0).is_err());
        assert!(child_for(&r, b"x").is_err());
    }
}
