//! The broad phase's spatial index: a hierarchical uniform grid, hashed,
//! one slot per box, rebuilt by a counting sort (`cell_list.rs`) or kept
//! and updated in place from step to step (`fat_grid.rs`), walked by rays
//! (`ray_walk.rs`).
//!
//! Boxes live on levels of doubling cell size `w_ℓ = w₀·2^ℓ`; each goes to
//! the level whose cells are at least its extent, where it spans at most
//! two cells per axis (Mirtich's hierarchical grid, as in pe/waLBerla's
//! `HashGrids`), in the one cell holding its minimum corner. A scene with sizes from 1 to 1000 thus costs
//! about what a uniform one does, instead of flooding fine cells.
//!
//! Cells are hashed into a table of `2^k` buckets built by counting sort
//! (bucket starts plus flat arrays in bucket order, the "dense hashing"
//! layout). Each slot keeps its integer cell coordinates and level, so cells
//! sharing a bucket are never confused, and its `f32` box next to them, so
//! a cell's boxes are read contiguously.
//!
//! Two boxes of one level overlap only if their cells are neighbours, so
//! pairs of one level come from each cell and half of its neighbours, each
//! once, with no de-duplication. Boxes above the finest occupied level are
//! also listed in every cell they overlap ("cover" entries): a finer box or
//! a query finds them in its own cells of that level, and takes each in the
//! cell holding the overlap's minimum corner only. On the finest level a
//! query visits `[cell(min) - 1, cell(max)]`.
//!
//! Items may carry a group (the body of a frame): items of one group are
//! never paired. In a mesh, most overlapping boxes are the body's own
//! neighbouring elements.

mod cell;
mod cell_list;
mod fat_grid;
mod grid_box;
mod near;
mod ray_walk;

pub(crate) use cell::{CellSize, cell_size_for, morton};
pub(crate) use cell_list::{CellList, MAX_ITEMS, Spreads};
pub(crate) use fat_grid::FatGrid;
pub(crate) use grid_box::GridBox;
pub(crate) use near::NearLists;
pub(crate) use ray_walk::walk_ray;

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
