//! The mode weights of the stress runs.

use crate::LockMode;
use rand::Rng;

/// A random mode, weak ones most often, so the fast path is busy and
/// strong requests have something to transfer: `AccessShare` 35 %,
/// `RowShare` 15 %, `RowExclusive` 20 %, `ShareUpdateExclusive` 5 %,
/// `Share` 7 %, `ShareRowExclusive` 4 %, `Exclusive` 6 %,
/// `AccessExclusive` 8 %. Draws one number in `0..100` from `rng`.
///
/// ```
/// use rand::SeedableRng;
/// let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
/// let m = turnstile_lock::testing::random_mode(&mut rng);
/// assert!(turnstile_lock::LockMode::ALL.contains(&m));
/// ```
pub fn random_mode(rng: &mut impl Rng) -> LockMode {
    match rng.random_range(0..100) {
        0..=34 => LockMode::AccessShare,
        35..=49 => LockMode::RowShare,
        50..=69 => LockMode::RowExclusive,
        70..=74 => LockMode::ShareUpdateExclusive,
        75..=81 => LockMode::Share,
        82..=85 => LockMode::ShareRowExclusive,
        86..=91 => LockMode::Exclusive,
        _ => LockMode::AccessExclusive,
    }
}
