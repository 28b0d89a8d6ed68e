//! Resting contacts: the last step's contacts of frames that did not move,
//! taken again instead of running FMB on the same two frames.
//!
//! FMB's answer depends on the two frames and their displacements only.
//! A pair of bodies at rest (`apart.rs`: displacement exactly zero at the
//! last step and this one, no re-pose between, store indices unchanged)
//! meets this step exactly as it met at the last one, bit for bit; a pair
//! of such a body and a fixed frame likewise. So the narrow phase keeps
//! the last step's chunks of contacts, each with the store index of the
//! frame whose slot gave it and its partner's key, and a candidate pair at
//! rest found there takes that contact (its box and interval). A pair at
//! rest not found there goes through FMB as any other (it is most often
//! remembered apart, `apart.rs`): an answer is never guessed, only reused.
//! Bullet's persistent manifolds and Box2D's contact list keep touching
//! pairs from step to step in the same spirit; here only exact repeats are
//! kept, so the contacts are those a fresh world computes.

use super::chunk::Chunk;
use crate::contact::Contact;
use crate::fallible::room_for;

/// The last step's contacts, and where each moving frame's are.
#[derive(Clone, Debug, Default)]
pub(super) struct RestingContacts<const D: usize> {
    /// The last step's chunks (its contacts and their keys), swapped with
    /// the step's by the narrow phase; the first `count` hold contacts.
    pub chunks: Vec<Chunk<D>>,
    pub count: usize,
    /// True when the chunks' contacts were all found with the pairs' memory
    /// (`Narrowing::coherent`: no body turning, a narrow phase): else none
    /// is reused. (A world's contact detail never changes.)
    pub reusable: bool,
    /// Per moving frame (store index): its contacts as `[chunk, start,
    /// end]`, read by [`RestingContacts::find`] once indexed.
    runs: Vec<[u32; 3]>,
}

impl<const D: usize> RestingContacts<D> {
    /// Indexes the chunks' contacts by the frame that gave them, for `n`
    /// moving frames: true when they can be reused. The frames' store
    /// indices are the last step's (the caller checks).
    pub fn index(&mut self, n: usize) -> bool {
        // On low memory, none reused (an answer as good, found afresh).
        if !self.reusable || !room_for(&mut self.runs, n) {
            return false;
        }
        self.runs.clear();
        self.runs.resize(n, [0; 3]);
        for (c, chunk) in self.chunks[..self.count].iter().enumerate() {
            // A frame's contacts are contiguous: its slot gives them all.
            let mut start = 0;
            for run in chunk.keys.chunk_by(|a, b| a >> 32 == b >> 32) {
                let end = start + run.len();
                if let Some(r) = self.runs.get_mut((run[0] >> 32) as usize) {
                    *r = [c as u32, start as u32, end as u32];
                }
                start = end;
            }
        }
        true
    }

    /// The last step's contact between moving frame `i` (store index) and
    /// the partner of key `key`, when `i`'s slot gave one.
    #[inline]
    pub fn find(&self, i: u32, key: u32) -> Option<&Contact<D>> {
        let &[c, start, end] = self.runs.get(i as usize)?;
        let chunk = &self.chunks[c as usize];
        let keys = &chunk.keys[start as usize..end as usize];
        let k = keys.iter().position(|&x| x as u32 == key)?;
        Some(&chunk.contacts[start as usize + k])
    }
}
