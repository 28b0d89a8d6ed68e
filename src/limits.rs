//! The two numbers of the [range rule](crate::range), in a module of their
//! own: frames validate against them (`frame.rs`) and the rule's bounds are
//! computed from them (`range.rs`), without either importing the other
//! back. Public as `fmbgrid::frame::{MAX_COORDINATE, MIN_RELATIVE_LENGTH}`.

/// Largest absolute value accepted for any coordinate, component or velocity.
///
/// Keeps every product formed by the narrow phase far from `f64` overflow.
pub const MAX_COORDINATE: f64 = 1e15;

/// Smallest accepted component length relative to the frame's longest
/// component, and to the coordinates of its box (the [range
/// rule](crate::range): a frame's reach is `min(MAX_COORDINATE, ℓ_min /
/// MIN_RELATIVE_LENGTH)`).
pub const MIN_RELATIVE_LENGTH: f64 = 1e-12;
