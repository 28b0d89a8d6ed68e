//! Serde glue (the `serde` feature). The const-generic arrays of the
//! public types (serde itself implements fixed sizes only): a vector
//! `[f64; D]` as a sequence of `D` numbers, a matrix `[[f64; D]; D]` as
//! `D` such sequences, a sequence of another length refused with serde's
//! `invalid_length` error. Frames and poses travel as their defining
//! numbers and come back through their validating constructors, so a
//! deserialized frame is a valid frame (the same, bit for bit, as the one
//! serialized) or an error.

use serde::de::Error;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{FrameError, WorldError};
use crate::frame::{Frame, FrameKind};
use crate::world::Pose;

/// `#[serde(with = "crate::serde_impls::vector")]`.
pub(crate) mod vector {
    use super::*;

    pub(crate) fn serialize<S: Serializer, const N: usize>(v: &[f64; N], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<[f64; N], D::Error> {
        exact(Vec::<f64>::deserialize(d)?)
    }
}

/// `#[serde(with = "crate::serde_impls::matrix")]`.
pub(crate) mod matrix {
    use super::*;

    pub(crate) fn serialize<S: Serializer, const N: usize>(m: &[[f64; N]; N], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter().map(|row| row.as_slice()))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<[[f64; N]; N], D::Error> {
        let rows = Vec::<Vec<f64>>::deserialize(d)?;
        let rows: Vec<[f64; N]> = rows.into_iter().map(exact).collect::<Result<_, _>>()?;
        exact(rows)
    }
}

/// The vector as an array of exactly `N` items.
fn exact<T, E: Error, const N: usize>(v: Vec<T>) -> Result<[T; N], E> {
    let len = v.len();
    v.try_into().map_err(|_| E::invalid_length(len, &format!("{N} numbers").as_str()))
}

/// A frame's defining numbers.
#[derive(Serialize, Deserialize)]
pub(crate) struct FrameData<const D: usize> {
    kind: FrameKind,
    #[serde(with = "vector")]
    origin: [f64; D],
    #[serde(with = "matrix")]
    components: [[f64; D]; D],
    #[serde(with = "vector")]
    velocity: [f64; D],
}

impl<const D: usize> From<Frame<D>> for FrameData<D> {
    fn from(f: Frame<D>) -> Self {
        FrameData { kind: f.kind(), origin: f.origin(), components: f.components(), velocity: f.velocity() }
    }
}

impl<const D: usize> TryFrom<FrameData<D>> for Frame<D> {
    type Error = FrameError;

    fn try_from(d: FrameData<D>) -> Result<Self, FrameError> {
        let f = Frame::new(d.kind, d.origin, d.components)?;
        if d.velocity == [0.0; D] { Ok(f) } else { f.with_velocity(d.velocity) }
    }
}

/// A pose's defining numbers.
#[derive(Serialize, Deserialize)]
pub(crate) struct PoseData<const D: usize> {
    #[serde(with = "matrix")]
    linear: [[f64; D]; D],
    #[serde(with = "vector")]
    translation: [f64; D],
}

impl<const D: usize> From<Pose<D>> for PoseData<D> {
    fn from(p: Pose<D>) -> Self {
        PoseData { linear: p.linear(), translation: p.translation() }
    }
}

impl<const D: usize> TryFrom<PoseData<D>> for Pose<D> {
    type Error = WorldError;

    fn try_from(d: PoseData<D>) -> Result<Self, WorldError> {
        Pose::new(d.linear, d.translation)
    }
}
