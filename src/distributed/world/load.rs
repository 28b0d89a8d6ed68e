//! Loading from one rank: the bodies of a scene read by one rank, each
//! sent once to the rank that keeps it, instead of every rank making
//! every insert.

use super::*;
use crate::world::Placed;

impl<const D: usize, C: Comm> DistributedWorld<D, C> {
    /// Inserts `bodies`, which only rank `root` passes (the others' are
    /// ignored: pass none), as [`DistributedWorld::insert_many`] would
    /// insert them on every rank: the same ids, in order, and the same
    /// keepers (the owner of a body's reference point, or before the
    /// first step ranks in turn); collective. The root checks each body as
    /// `insert` does and sends it, placed, to its keeper only (one
    /// all-to-all, each body once): no other rank reads or checks the
    /// whole list. All or nothing.
    ///
    /// # Errors
    /// [`DistributedError::OnRank`] naming the root for a body it refuses
    /// (the cause names the body's index in `bodies`), for a batch past
    /// what one exchange carries (2³¹ words: about 39M one-box bodies in
    /// 3D; load such a scene in parts), or naming a keeper that could not
    /// take its bodies; [`DistributedError::OnRank`] for a `root` that is
    /// not a rank. Then no body is inserted, on any rank.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, GlobalHandle, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let unit = Frame2::from_aabb([0.0; 2], [1.0; 2])?;
    /// let handles = world.insert_from(0, (0..3).map(|_| Body::fixed(vec![unit])).collect())?;
    /// assert_eq!(handles, [GlobalHandle(0), GlobalHandle(1), GlobalHandle(2)]);
    /// assert!(world.insert_from(0, vec![Body::fixed(vec![unit]), Body::moving(vec![])]).is_err());
    /// assert_eq!(world.len(), 3); // all or nothing
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert_from(&mut self, root: usize, bodies: Vec<Body<D>>) -> Result<Vec<GlobalHandle>, DistributedError> {
        let (me, size) = (self.comm.rank(), self.comm.size());
        if root >= size {
            // Every rank sees it: the lowest of them, rank 0, names it, so
            // that every rank returns the same error.
            return Err(DistributedError::OnRank { rank: 0, cause: format!("no rank {root} of {size} to load from") });
        }
        let first = self.next_id;
        let mut out = vec![Vec::new(); size];
        let mut count = 0u64;
        let mut sent = Ok(());
        if me == root {
            for (k, mut body) in bodies.into_iter().enumerate() {
                let id = first + k as u64;
                let owner = match &self.regions {
                    Some(r) => r.owner(&body.pose.translation()),
                    None => (id % size as u64) as usize,
                };
                match self.world.admit(&mut body) {
                    Ok(frames) => {
                        let indices = (0..frames.len() as u32).collect();
                        parcel::encode(&Parcel { id, indices, placed: Placed { body, frames } }, &mut out[owner]);
                    }
                    Err(e) => {
                        let cause = format!("body {k} of the batch: {e}");
                        sent = Err(DistributedError::OnRank { rank: me, cause });
                        break;
                    }
                }
                count += 1;
            }
        }
        // An exchange carries fewer than 2³¹ words a rank (MPI's counts).
        let words: usize = out.iter().map(Vec::len).sum();
        if sent.is_ok() && words > i32::MAX as usize {
            let cause = format!("a batch of {words} words, past the 2^31 an exchange carries: load it in parts");
            sent = Err(DistributedError::OnRank { rank: me, cause });
        }
        self.agree_call("insert_from", self.call_digest("insert_from", [root as u64]), sent)?;
        // The count from the root alone: the others pass 0.
        let count = self.comm.all_max(count);
        let received = self.comm.exchange(out);
        let mut kept = Vec::new();
        let taken = self.take_loaded(&received, &mut kept);
        let agreed = self.agree(taken);
        self.keep_or_undo(agreed, kept, first, count)
    }

    /// Inserts the bodies sent to this rank to keep (into `kept`: id,
    /// handle, frames), each through the fault hook of `insert`.
    fn take_loaded(
        &mut self,
        received: &[Vec<u64>],
        kept: &mut Vec<(u64, BodyHandle, usize)>,
    ) -> Result<(), DistributedError> {
        for words in received {
            for p in parcel::decode::<D>(words)? {
                self.injected("insert")?;
                let frames = p.placed.frames.len();
                let h = self.world.insert_placed(p.placed)?;
                kept.push((p.id, h, frames));
            }
        }
        Ok(())
    }
}
