//! The least-squares slope that turns the soak's samples into a growth
//! rate: `rss_growth_mb_per_million` is the slope of resident memory (MB)
//! against transactions run (millions).
//!
//! For points `(xᵢ, yᵢ)`, `i = 1..n`, with means `x̄` and `ȳ`:
//!
//! ```text
//! slope = Σ (xᵢ − x̄)(yᵢ − ȳ) / Σ (xᵢ − x̄)²
//! ```
//!
//! Centring on the means first keeps the sums small, so the figure does not
//! lose precision to cancellation when x is large (millions of transactions
//! are not, but RSS in kB against a raw count would be).

/// The least-squares slope of `points` (`(x, y)` pairs), or `None` when it
/// is undefined: fewer than two points, every x equal, or a value that is
/// not finite.
///
/// ```text
/// let rss_mb = [(0.2, 100.0), (0.6, 100.4), (1.0, 100.8)];
/// assert_eq!(least_squares_slope(&rss_mb), Some(1.0)); // 1 MB per million
/// ```
pub fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 || points.iter().any(|&(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let covariance: f64 = points.iter().map(|&(x, y)| (x - mean_x) * (y - mean_y)).sum();
    let variance: f64 = points.iter().map(|&(x, _)| (x - mean_x) * (x - mean_x)).sum();
    if variance == 0.0 {
        return None;
    }
    Some(covariance / variance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn a_straight_line_gives_its_slope() {
        let line: Vec<(f64, f64)> = (0..10).map(|i| (f64::from(i) * 0.1, 250.0 + 3.0 * f64::from(i) * 0.1)).collect();
        assert!(close(least_squares_slope(&line), 3.0), "{:?}", least_squares_slope(&line));
        let flat = [(0.2, 80.0), (0.5, 80.0), (0.9, 80.0)];
        assert!(close(least_squares_slope(&flat), 0.0));
        let shrinking = [(1.0, 10.0), (2.0, 8.0)];
        assert!(close(least_squares_slope(&shrinking), -2.0));
    }

    #[test]
    fn noise_around_a_line_is_fitted_by_least_squares() {
        // y = 2x + 1 with residuals +1, -1, -1, +1: the fit is the line itself.
        let points = [(0.0, 2.0), (1.0, 2.0), (2.0, 4.0), (3.0, 8.0)];
        // Σ(x−1.5)(y−4) = (−1.5)(−2) + (−0.5)(−2) + (0.5)(0) + (1.5)(4) = 10; Σ(x−1.5)² = 5.
        assert!(close(least_squares_slope(&points), 2.0));
        let unordered = [(3.0, 8.0), (0.0, 2.0), (2.0, 4.0), (1.0, 2.0)];
        assert!(close(least_squares_slope(&unordered), 2.0), "the order of the samples does not matter");
    }

    #[test]
    fn an_undefined_slope_is_none() {
        assert_eq!(least_squares_slope(&[]), None);
        assert_eq!(least_squares_slope(&[(1.0, 5.0)]), None, "one point has no slope");
        assert_eq!(least_squares_slope(&[(1.0, 5.0), (1.0, 9.0)]), None, "every x equal");
        assert_eq!(least_squares_slope(&[(1.0, 5.0), (2.0, f64::NAN)]), None);
    }
}
