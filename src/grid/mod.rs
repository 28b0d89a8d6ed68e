//! The broad phase's spatial index: a hierarchical uniform hashed grid.
//!
//! Items (frames' boxes) live on levels of doubling cell size
//! `w_ℓ = w₀·2^ℓ`; each item goes to the finest level whose cells are at
//! least as large as its extent, so it overlaps at most `2^D` cells there,
//! however large or fast it is (Mirtich's hierarchical grid, as in
//! pe/waLBerla's `HashGrids`). A scene with sizes from 1 to 1000 thus costs
//! about what a uniform one does, instead of flooding fine cells.
//!
//! Cells are hashed into a table of `2^k` buckets built by counting sort
//! (two passes, no pointers: bucket starts plus one entry array, the
//! "dense hashing" layout). Each entry keeps its integer cell coordinates and
//! level, so cells sharing a bucket are never confused.
//!
//! Every pair is reported once with the reference-point method: a pair is
//! taken only in the cell (of the query's level) that holds the minimum
//! corner of the two boxes' overlap.
//!
//! Items may carry a group (the body of a frame): items of one group are
//! never paired, and are skipped before their boxes are read. In a mesh,
//! most overlapping boxes are the body's own neighbouring elements.

mod cell;
mod cell_list;
mod grid_box;
mod hash_grid;

pub(crate) use cell::{CellSize, cell_size_for};
pub(crate) use cell_list::CellList;
#[cfg(test)]
pub(crate) use grid_box::GridBox;
pub(crate) use hash_grid::{HashGrid, MAX_ITEMS, morton};

/// Seeded test boxes: sizes from 0.01 to 100 (log-uniform), 5% flat.
#[cfg(test)]
pub(crate) fn random_boxes(n: usize, seed: u64, spread: f64) -> Vec<crate::aabb::Aabb<3>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let c: [f64; 3] = std::array::from_fn(|_| rng.random_range(-spread..spread));
            let e: [f64; 3] = std::array::from_fn(|_| 10f64.powf(rng.random_range(-2.0..2.0)));
            let flat = rng.random_bool(0.05);
            crate::aabb::Aabb { min: c, max: std::array::from_fn(|i| if flat && i == 0 { c[i] } else { c[i] + e[i] }) }
        })
        .collect()
}
