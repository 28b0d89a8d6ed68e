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

mod cell;
mod grid_box;
mod hash_grid;

pub(crate) use cell::{CellSize, cell_size_for, parent};
pub(crate) use grid_box::GridBox;
pub(crate) use hash_grid::{HashGrid, MAX_ITEMS, morton};
