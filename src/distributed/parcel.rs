//! Bodies as words for the exchange: a body with its placed frames (all
//! of them for a migrating body, those that reach a rank for a ghost),
//! every number as its `f64` bits, so that the receiving world holds the
//! very frames the sender held.

use crate::error::WorldError;
use crate::frame::{Frame, FrameKind};
use crate::world::{Body, Motion, Placed, Pose};

/// A body on its way to another rank: its global id, which of its frames
/// travel (their indices in the body), and the body with those frames.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Parcel<const D: usize> {
    pub id: u64,
    pub indices: Vec<u32>,
    pub placed: Placed<D>,
}

const BAD: WorldError = WorldError::BadSnapshot("a distributed world's parcel");

/// Appends `p` to `out`.
pub(crate) fn encode<const D: usize>(p: &Parcel<D>, out: &mut Vec<u64>) {
    let b = &p.placed.body;
    let f = |out: &mut Vec<u64>, v: &[f64]| out.extend(v.iter().map(|x| x.to_bits()));
    out.extend([p.id, u64::from(b.motion == Motion::Moving), u64::from(b.groups), u64::from(b.mask), b.user_data]);
    out.push(p.indices.len() as u64);
    f(out, &b.velocity);
    f(out, &b.angular_velocity);
    f(out, b.pose.linear().as_flattened());
    f(out, &b.pose.translation());
    for ((&index, own), placed) in p.indices.iter().zip(&b.frames).zip(&p.placed.frames) {
        out.push(u64::from(index) | (u64::from(own.kind() == FrameKind::Tetrahedron) << 32));
        for g in [own, placed] {
            f(out, &g.origin());
            f(out, g.components().as_flattened());
        }
        let bx = placed.aabb();
        f(out, &bx.min);
        f(out, &bx.max);
    }
}

/// Reads the parcels of `words` (as many as [`encode`] wrote).
pub(crate) fn decode<const D: usize>(words: &[u64]) -> Result<Vec<Parcel<D>>, WorldError> {
    let mut r = Reader { words, at: 0 };
    let mut parcels = Vec::new();
    while r.at < words.len() {
        parcels.push(r.parcel()?);
    }
    Ok(parcels)
}

/// Frames a migration's buffer to one rank: `words` (the parcels) headed
/// by their count and followed by `state` (the state of the migrating
/// bodies' body pairs, in threes); left empty when both are.
pub(crate) fn frame_migration(words: &mut Vec<u64>, state: &[u64]) {
    if words.is_empty() && state.is_empty() {
        return;
    }
    words.insert(0, words.len() as u64);
    words.extend_from_slice(state);
}

/// The parcels' words and the pair state of a buffer [`frame_migration`]
/// framed (an empty buffer: nothing).
pub(crate) fn unframe_migration(words: &[u64]) -> Result<(&[u64], &[u64]), WorldError> {
    let Some((&n, rest)) = words.split_first() else { return Ok((&[], &[])) };
    let n = usize::try_from(n).map_err(|_| BAD)?;
    if n > rest.len() || (rest.len() - n) % 3 != 0 {
        return Err(BAD);
    }
    Ok(rest.split_at(n))
}

/// A body's motion for its ghosts: velocity, turn, and the pose when the
/// owner placed the body anew.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MotionUpdate<const D: usize> {
    pub velocity: [f64; D],
    pub turn: [f64; 3],
    pub pose: Option<Pose<D>>,
}

/// What a rank tells the holders of its bodies' ghosts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Message<const D: usize> {
    /// A ghost, new or replacing the one held.
    Ghost(Parcel<D>),
    /// The body's motion changed (or it was placed anew).
    Motion(u64, MotionUpdate<D>),
    /// The ghost is no longer needed (or its body moved to another rank).
    Drop(u64),
}

/// Appends `m` to `out`.
pub(crate) fn encode_message<const D: usize>(m: &Message<D>, out: &mut Vec<u64>) {
    match m {
        Message::Ghost(p) => {
            out.push(0);
            encode(p, out);
        }
        Message::Motion(id, motion) => {
            out.extend([1, *id, u64::from(motion.pose.is_some())]);
            out.extend(motion.velocity.iter().chain(&motion.turn).map(|x| x.to_bits()));
            let pose = motion.pose.unwrap_or(Pose::IDENTITY);
            out.extend(pose.linear().as_flattened().iter().chain(&pose.translation()).map(|x| x.to_bits()));
        }
        Message::Drop(id) => out.extend([2, *id]),
    }
}

/// Reads the messages of `words` (as many as [`encode_message`] wrote).
pub(crate) fn decode_messages<const D: usize>(words: &[u64]) -> Result<Vec<Message<D>>, WorldError> {
    let mut r = Reader { words, at: 0 };
    let mut messages = Vec::new();
    while r.at < words.len() {
        messages.push(match r.word()? {
            0 => Message::Ghost(r.parcel()?),
            1 => {
                let id = r.word()?;
                let placed = r.word()? == 1;
                let (velocity, turn) = (r.floats()?, r.floats()?);
                let pose = Pose::new(r.matrix()?, r.floats()?)?;
                Message::Motion(id, MotionUpdate { velocity, turn, pose: placed.then_some(pose) })
            }
            2 => Message::Drop(r.word()?),
            _ => return Err(BAD),
        });
    }
    Ok(messages)
}

struct Reader<'a> {
    words: &'a [u64],
    at: usize,
}

impl Reader<'_> {
    fn word(&mut self) -> Result<u64, WorldError> {
        let w = *self.words.get(self.at).ok_or(BAD)?;
        self.at += 1;
        Ok(w)
    }

    fn floats<const N: usize>(&mut self) -> Result<[f64; N], WorldError> {
        let mut v = [0.0; N];
        for x in &mut v {
            *x = f64::from_bits(self.word()?);
        }
        Ok(v)
    }

    fn matrix<const D: usize>(&mut self) -> Result<[[f64; D]; D], WorldError> {
        let mut m = [[0.0; D]; D];
        for row in &mut m {
            *row = self.floats()?;
        }
        Ok(m)
    }

    fn parcel<const D: usize>(&mut self) -> Result<Parcel<D>, WorldError> {
        let id = self.word()?;
        let moving = self.word()? == 1;
        let groups = u32::try_from(self.word()?).map_err(|_| BAD)?;
        let mask = u32::try_from(self.word()?).map_err(|_| BAD)?;
        let user_data = self.word()?;
        let n = usize::try_from(self.word()?).map_err(|_| BAD)?;
        // Each frame takes more than 2D words: a count past what is left is
        // corrupt (and must not size an allocation).
        if n == 0 || n > (self.words.len() - self.at) / (2 * D) {
            return Err(BAD);
        }
        let velocity = self.floats::<D>()?;
        let angular = self.floats::<3>()?;
        let pose = Pose::new(self.matrix()?, self.floats()?)?;
        let (mut indices, mut own, mut placed) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let w = self.word()?;
            indices.push(w as u32);
            let kind = if w >> 32 == 1 { FrameKind::Tetrahedron } else { FrameKind::Cuboid };
            own.push(Frame::new(kind, self.floats()?, self.matrix()?)?);
            let at = Frame::new(kind, self.floats()?, self.matrix()?)?;
            let aabb = crate::aabb::Aabb { min: self.floats()?, max: self.floats()? };
            placed.push(at.with_aabb(aabb));
        }
        let body = if moving { Body::moving(own) } else { Body::fixed(own) };
        let mut body =
            body.with_pose(pose).with_velocity(velocity).with_collision_filter(groups, mask).with_user_data(user_data);
        body.angular_velocity = angular;
        Ok(Parcel { id, indices, placed: Placed { body, frames: placed } })
    }
}
