//! Medians with bootstrap confidence intervals.
//!
//! Timings on a shared virtual machine are skewed (interrupts, other tenants, frequency
//! changes add long right tails), so the centre is the median and its uncertainty a
//! percentile bootstrap: resample the rounds with replacement, take the median of each
//! resample, and report the 2.5th and 97.5th percentiles of those medians.
//!
//! Overheads are *paired*: in every round each variant ran once, one after another, so the
//! per-round difference `variant − baseline` cancels drift that affects the whole round; the
//! median of those differences, bootstrapped the same way, is the overhead.

use crate::bpf::testing::Rng;
use serde::Serialize;

/// A median and its 95% bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Estimate {
    /// Whether the interval excludes zero (the effect is distinguishable from none).
    pub fn excludes_zero(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }

    /// Whether two intervals do not overlap.
    pub fn separated_from(&self, other: &Estimate) -> bool {
        self.lo > other.hi || self.hi < other.lo
    }
}

/// The median of `values` (the mean of the two middle values for an even count); NaN when
/// empty.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `q`-quantile (0..=1) of sorted values, by linear interpolation.
///
/// Written as `a + (b - a)·frac` and clamped to `[a, b]`: the textbook `a·(1 − frac) + b·frac`
/// rounds to one ulp above `a` when `a == b` for about one value in 500, which put a
/// 3-round run's lower bound above its own median.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos - pos.floor());
    if i + 1 < sorted.len() {
        let (a, b) = (sorted[i], sorted[i + 1]);
        (a + (b - a) * frac).clamp(a, b)
    } else {
        sorted[i]
    }
}

/// The median of `values` with a 95% percentile-bootstrap interval from `resamples`
/// resamples drawn with `seed`.
pub fn bootstrap_median(values: &[f64], resamples: usize, seed: u64) -> Estimate {
    let m = median(values);
    if values.len() < 2 || resamples == 0 {
        return Estimate {
            median: m,
            lo: m,
            hi: m,
        };
    }
    let mut rng = Rng::new(seed);
    let mut medians = Vec::with_capacity(resamples);
    let mut sample = vec![0.0; values.len()];
    for _ in 0..resamples {
        for s in sample.iter_mut() {
            *s = values[rng.below(values.len())];
        }
        medians.push(median(&sample));
    }
    medians.sort_by(f64::total_cmp);
    Estimate {
        median: m,
        lo: quantile(&medians, 0.025),
        hi: quantile(&medians, 0.975),
    }
}

/// Per-round differences `a[r] - b[r]`.
pub fn paired_differences(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_by_hand() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(quantile(&[0.0, 10.0], 0.25), 2.5);
    }

    #[test]
    fn interpolating_between_equal_values_gives_that_value_exactly() {
        // With the old `a·(1 − f) + a·f`, 0.2% of these came out one ulp above `a`.
        let mut rng = Rng::new(11);
        for _ in 0..100_000 {
            let a = (rng.below(1 << 30) as f64 - (1 << 29) as f64) / 7919.0;
            assert_eq!(quantile(&[a, a], 0.975), a);
            assert_eq!(quantile(&[a, a, a + 1.0], 0.2), a);
        }
        // Between distinct values the result stays inside them.
        assert_eq!(quantile(&[1.0, 2.0], 0.5), 1.5);
        assert_eq!(quantile(&[1.0, 2.0, 4.0], 0.75), 3.0);
    }

    #[test]
    fn three_rounds_give_an_interval_around_their_median() {
        // The CI failure: a 3-round run where two rounds tie.
        let mut rng = Rng::new(5);
        for seed in 0..2000 {
            let a = (rng.below(1 << 20) as f64) / 97.0 - 5000.0;
            let b = a + (rng.below(100) as f64) / 13.0;
            for values in [[a, a, b], [b, a, a], [a, b, b]] {
                let e = bootstrap_median(&values, 200, seed);
                assert!(e.lo <= e.median && e.median <= e.hi, "{values:?}: {e:?}");
            }
        }
    }

    #[test]
    fn the_interval_holds_the_median_and_narrows_with_more_data() {
        // 0..=100 shuffled deterministically: median 50.
        let mut rng = Rng::new(7);
        let mut small: Vec<f64> = (0..=100).map(f64::from).collect();
        for i in (1..small.len()).rev() {
            small.swap(i, rng.below(i + 1));
        }
        let e = bootstrap_median(&small, 2000, 1);
        assert_eq!(e.median, 50.0);
        assert!(
            e.lo < 50.0 && e.hi > 50.0 && e.lo > 35.0 && e.hi < 65.0,
            "{e:?}"
        );
        // The same spread with ten times the rounds gives a narrower interval.
        let big: Vec<f64> = (0..1010).map(|i| f64::from(i % 101)).collect();
        let f = bootstrap_median(&big, 2000, 1);
        assert!(f.hi - f.lo < e.hi - e.lo, "{f:?} vs {e:?}");
        // Constant data: a zero-width interval.
        let c = bootstrap_median(&[5.0; 9], 100, 3);
        assert_eq!((c.lo, c.median, c.hi), (5.0, 5.0, 5.0));
        assert!(c.excludes_zero());
        assert!(!Estimate {
            median: 0.0,
            lo: -1.0,
            hi: 1.0
        }
        .excludes_zero());
    }

    #[test]
    fn paired_differences_cancel_shared_drift() {
        // Both variants drift by the same amount per round; the paired difference is exact.
        let base: Vec<f64> = (0..20).map(|r| 100.0 + 10.0 * f64::from(r)).collect();
        let filt: Vec<f64> = base.iter().map(|b| b + 30.0).collect();
        let d = bootstrap_median(&paired_differences(&filt, &base), 500, 2);
        assert_eq!((d.lo, d.median, d.hi), (30.0, 30.0, 30.0));
    }
}
