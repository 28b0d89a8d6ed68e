//! Temporal coherence: a candidate pair FMB found apart is not tested again
//! while its two frames, together, have travelled less than the gap that
//! separated them.
//!
//! When FMB rejects a pair, `narrow/separation.rs` bounds from below the
//! distance `g` between the two frames where they end the step. Each
//! moving body keeps an odometer, the length of the path it has travelled
//! (the sum of its displacements' lengths); fixed bodies stay at zero. The
//! pair is remembered with the threshold `g + odo(a) + odo(b)` as of the
//! end of that step. At a later step, while `odo(a) + odo(b)` at its end is
//! still below the threshold, the frames have moved by less than `g` in
//! all, so no instant of that step brings them together (a separating
//! slab shrinks by at most the distance its two sides travel): the pair is
//! skipped. The answer is the same as testing it; only the work is saved.
//!
//! Each moving frame (by store index) remembers up to [`WAYS`] partners.
//! A pair is remembered and looked up under the frame whose slot of the
//! moving list produced it, so during a step an entry is read and written
//! by the one task that owns that slot: the entries are atomics only so
//! that the parallel tasks can share the table without `unsafe` (relaxed
//! loads and stores, plain moves on common targets; the results never
//! depend on the thread count).
//!
//! Everything is forgotten (at the next step's start) when the stores are
//! compacted or re-sorted (indices and ranks change) or a body starts or
//! stops turning, and a body moved by [`World::set_pose`]
//! gets an infinite odometer: none of its pairs is skipped again until
//! then.
//!
//! The same odometers' reset also bounds the memory of `resting.rs`: a
//! body whose displacement was exactly zero this step and the last, with
//! no re-pose between, is *at rest*, and a contact of two such bodies (or
//! of one and a fixed frame) found at the last step is this step's too.
//!
//! [`World::set_pose`]: super::World::set_pose

use std::sync::atomic::{AtomicU64, Ordering};

use super::context::zero_shift;
use crate::fallible::{NoRoom, room};

#[cfg(feature = "parallel")]
use rayon::prelude::*;

/// Partners remembered per moving frame.
const WAYS: usize = 4;

/// An unused entry: partner key `u32::MAX` (no frame has it), threshold
/// `+0.0` (no sum of odometers is below it).
const EMPTY: u64 = u32::MAX as u64;

/// Key of a fixed partner: its store index with the top bit set (store
/// indices are below `MAX_ITEMS`, 2²⁶).
const FIXED: u32 = 1 << 31;

/// The bits of `still` of a body at rest at the last step and this one.
const AT_REST: u8 = 0b11;

/// Odometer growth per unit of displacement: covers the round-off of the
/// displacement's length and of the sums (a few ulps of `f64`).
const ROUND_UP: f64 = 1.0 + 1e-12;

/// Which pairs are known to be apart, and how far each moving body has
/// travelled.
#[derive(Debug, Default)]
pub(super) struct ApartPairs {
    /// Per moving frame (store index): partner key in the low 32 bits,
    /// threshold (an `f32` rounded down) in the high 32.
    entries: Vec<[AtomicU64; WAYS]>,
    /// Per moving body (rank): the odometer at the start and at the end of
    /// the current step.
    travelled: Vec<[f64; 2]>,
    /// Per moving body (rank): bit 1 set when its displacement was exactly
    /// `+0.0` at the last step, bit 0 at this one (no re-pose since);
    /// [`AT_REST`] is both.
    still: Vec<u8>,
    /// True when some body is at rest this step.
    some_at_rest: bool,
    /// True while `entries` and `travelled` are indexed by the moving
    /// store's indices and ranks as they are (one entry a frame, one
    /// odometer a body); false from a [`ApartPairs::forget`] to the reset
    /// of the next [`ApartPairs::begin_step`].
    fresh: bool,
}

impl Clone for ApartPairs {
    fn clone(&self) -> Self {
        let load = |e: &[AtomicU64; WAYS]| e.each_ref().map(|x| AtomicU64::new(x.load(Ordering::Relaxed)));
        let entries = self.entries.iter().map(load).collect();
        let (travelled, still, some_at_rest, fresh) =
            (self.travelled.clone(), self.still.clone(), self.some_at_rest, self.fresh);
        ApartPairs { entries, travelled, still, some_at_rest, fresh }
    }
}

/// The key of a moving partner (store index `j`).
#[inline(always)]
pub(super) fn moving_key(j: u32) -> u32 {
    j
}

/// The key of a fixed partner (store index `k`).
#[inline(always)]
pub(super) fn fixed_key(k: u32) -> u32 {
    k | FIXED
}

impl ApartPairs {
    /// Forgets every pair and zeroes the odometers, for `frames` moving
    /// frames of `bodies` moving bodies. Allocates only when they grew.
    ///
    /// # Errors
    /// [`NoRoom`], the table then too short (not fresh).
    pub fn reset(&mut self, frames: usize, bodies: usize) -> Result<(), NoRoom> {
        room(&mut self.entries, frames)?;
        room(&mut self.travelled, bodies)?;
        room(&mut self.still, bodies)?;
        self.entries.truncate(frames);
        for e in &mut self.entries {
            *e = [const { AtomicU64::new(EMPTY) }; WAYS];
        }
        self.entries.resize_with(frames, || [const { AtomicU64::new(EMPTY) }; WAYS]);
        self.travelled.clear();
        self.travelled.resize(bodies, [0.0; 2]);
        self.still.clear();
        self.still.resize(bodies, 0);
        Ok(())
    }

    /// Store indices or ranks changed, or the proofs no longer hold:
    /// everything is forgotten at the next step's start.
    pub fn forget(&mut self) {
        self.fresh = false;
    }

    /// Starts a step of `frames` moving frames of `bodies` moving bodies,
    /// body `r` displaced by `shifts[r]`: after a reset if forgotten.
    ///
    /// # Errors
    /// [`NoRoom`] for a reset, everything then still forgotten.
    pub fn begin_step<const D: usize>(
        &mut self,
        frames: usize,
        bodies: usize,
        shifts: &[[f64; D]],
    ) -> Result<(), NoRoom> {
        if !self.fresh {
            self.reset(frames, bodies)?;
            self.fresh = true;
        }
        self.start_step(shifts);
        Ok(())
    }

    /// Panics unless, while fresh, the table has one entry a frame and one
    /// odometer a body.
    pub fn validate(&self, frames: usize, bodies: usize) {
        if self.fresh {
            assert_eq!((self.entries.len(), self.travelled.len()), (frames, bodies), "apart pairs' indices");
        }
    }

    /// Starts a step in which body `r` is displaced by `shifts[r]`.
    pub fn start_step<const D: usize>(&mut self, shifts: &[[f64; D]]) {
        let go = |((t, still), d): ((&mut [f64; 2], &mut u8), &[f64; D])| {
            let length = d.iter().map(|x| x * x).sum::<f64>().sqrt();
            *t = [t[1], t[1] + length * ROUND_UP];
            *still = (*still << 1 | u8::from(zero_shift(d))) & AT_REST;
            *still == AT_REST
        };
        #[cfg(feature = "parallel")]
        let rest = (self.travelled.par_iter_mut().zip(self.still.par_iter_mut()).zip(shifts))
            .with_min_len(4096)
            .map(go)
            .reduce(|| false, |a, b| a | b);
        #[cfg(not(feature = "parallel"))]
        let rest = self.travelled.iter_mut().zip(self.still.iter_mut()).zip(shifts).map(go).fold(false, |a, b| a | b);
        self.some_at_rest = rest;
    }

    /// Body `rank` was moved by other means than its velocity: none of its
    /// pairs is skipped until the next reset.
    pub fn teleported(&mut self, rank: u32) {
        if let Some(t) = self.travelled.get_mut(rank as usize) {
            *t = [f64::INFINITY; 2];
        }
        if let Some(s) = self.still.get_mut(rank as usize) {
            *s = 0;
        }
    }

    /// True when some moving body is at rest this step (see the module's
    /// doc).
    pub fn some_at_rest(&self) -> bool {
        self.fresh && self.some_at_rest
    }

    /// True when moving body `rank` and `other` (a moving body's rank;
    /// `None` for a fixed frame, which never moves) are at rest this step:
    /// their frames, and the frames' displacements, are the last step's.
    #[inline(always)]
    pub fn at_rest(&self, rank: u32, other: Option<u32>) -> bool {
        let still = |r: u32| self.still.get(r as usize) == Some(&AT_REST);
        still(rank) && other.is_none_or(still)
    }

    /// The odometers of moving body `rank` and of `other` (a moving body's
    /// rank; `None` for a fixed frame, which never travels), added, at the
    /// start and the end of the step.
    #[inline(always)]
    pub fn travelled(&self, rank: u32, other: Option<u32>) -> [f64; 2] {
        let odo = |r: u32| self.travelled.get(r as usize).copied().unwrap_or([f64::INFINITY; 2]);
        let [s, e] = odo(rank);
        match other.map(odo) {
            Some([t, f]) => [s + t, e + f],
            None => [s, e],
        }
    }

    /// True when frame `i` remembers partner `key` apart by more than
    /// `end`, the sum of the two odometers at the end of this step.
    #[inline(always)]
    pub fn is_apart(&self, i: u32, key: u32, end: f64) -> bool {
        self.entries.get(i as usize).is_some_and(|e| {
            e.iter().any(|x| {
                let x = x.load(Ordering::Relaxed);
                x as u32 == key && end < f64::from(f32::from_bits((x >> 32) as u32))
            })
        })
    }

    /// Frame `i` remembers partner `key` as apart until the two odometers
    /// add up to `threshold`; the entry it replaces is the same partner's,
    /// an empty one, or the one with the lowest threshold.
    pub fn remember(&self, i: u32, key: u32, threshold: f64) {
        let Some(e) = self.entries.get(i as usize) else { return };
        let t = threshold as f32;
        // Rounded down, so that the entry never outlives its proof.
        let t = if f64::from(t) > threshold { t.next_down() } else { t };
        let value = u64::from(key) | (u64::from(t.to_bits()) << 32);
        let threshold_of = |x: u64| f32::from_bits((x >> 32) as u32);
        let mut pick = 0;
        for (w, x) in e.iter().enumerate() {
            let x = x.load(Ordering::Relaxed);
            if x as u32 == key || x == EMPTY {
                pick = w;
                break;
            }
            if threshold_of(x) < threshold_of(e[pick].load(Ordering::Relaxed)) {
                pick = w;
            }
        }
        e[pick].store(value, Ordering::Relaxed);
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.entries.capacity() * size_of::<[AtomicU64; WAYS]>() + self.travelled.capacity() * size_of::<[f64; 2]>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_apart_until_the_odometers_reach_its_threshold() {
        let mut apart = ApartPairs::default();
        apart.reset(3, 2).unwrap();
        apart.start_step(&[[0.3, 0.4], [0.0, 0.0]]);
        assert_eq!(apart.travelled(0, None)[0], 0.0);
        assert!((apart.travelled(0, None)[1] - 0.5).abs() < 1e-12);
        assert_eq!(apart.travelled(0, Some(1)), apart.travelled(0, None)); // body 1 at rest
        apart.remember(1, moving_key(2), 1.0);
        assert!(apart.is_apart(1, moving_key(2), 0.99));
        assert!(!apart.is_apart(1, moving_key(2), 1.0));
        // Another partner, another frame, a fixed partner of the same index.
        assert!(!apart.is_apart(1, moving_key(0), 0.5));
        assert!(!apart.is_apart(2, moving_key(2), 0.5));
        assert!(!apart.is_apart(1, fixed_key(2), 0.5));
        // A re-proof replaces the entry; a full set drops the lowest.
        apart.remember(1, moving_key(2), 3.0);
        for (k, t) in [(5, 2.0), (6, 4.0), (7, 5.0), (8, 6.0)] {
            apart.remember(1, fixed_key(k), t);
        }
        assert!(!apart.is_apart(1, fixed_key(5), 1.5), "dropped: the lowest threshold");
        assert!(apart.is_apart(1, moving_key(2), 2.5));
        assert!(apart.is_apart(1, fixed_key(8), 5.5));
        // A teleported body's odometer ends every proof; a reset forgets.
        apart.teleported(0);
        assert!(!apart.is_apart(1, moving_key(2), apart.travelled(0, None)[1]));
        apart.reset(3, 2).unwrap();
        assert!(!apart.is_apart(1, moving_key(2), 0.0));
        assert_eq!(apart.travelled(0, None), [0.0; 2]);
    }

    #[test]
    fn thresholds_round_down() {
        let mut apart = ApartPairs::default();
        apart.reset(1, 1).unwrap();
        let t = 0.1_f64; // not an f32
        apart.remember(0, 0, t);
        assert!(!apart.is_apart(0, 0, t));
        assert!(apart.is_apart(0, 0, t - 1e-7));
    }
}
