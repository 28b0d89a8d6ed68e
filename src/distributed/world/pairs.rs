//! Body pairs and their events, kept where the pairs are: a pair `(a, b)`
//! (`a < b`) is kept by the rank that owns body `a`, and its state moves
//! with `a` when `a` migrates. A rank whose own contacts include a pair
//! kept elsewhere (its first body is a ghost here) claims it from the
//! keeper, which is the ghost's owner, a rank whose frames reach this one:
//! a neighbour. Pairs whose contacts are all found by the owner of their
//! first body, nearly all of them, never leave it; what travels is the
//! changes of the other ranks' claims, O(boundary).
//!
//! Why the answer is one `World`'s: a pair is in contact when some rank
//! finds one of its contacts, and the keeper knows every rank that does
//! (its own finds, and the claims). A rank tells the keeper when a pair
//! appears among its own contacts (it then holds a ghost of `a`, from the
//! keeper) or leaves them while it still holds a ghost of `a`; a rank
//! that no longer holds any frame of `a` cannot find the pair, and its
//! claim is dropped by the keeper, which knows where its ghosts are.

use super::*;

/// In a migrating body's pair state, the mark of a pair the old keeper
/// reported in the last step (where a rank's claim has the rank).
const KEPT: u64 = u64::MAX;

impl<const D: usize, C: Comm> DistributedWorld<D, C> {
    /// The body pairs this rank keeps after the step, and their events:
    /// claims told to and taken from the keepers of the other ranks' pairs
    /// (a neighbour exchange), then this rank's pairs compared with the
    /// last step's.
    pub(super) fn update_pairs(&mut self) {
        let size = self.comm.size();
        let mut found = std::mem::take(&mut self.found_spare);
        found.clear();
        found.extend(self.contacts.iter().map(|c| (c.a.body.0, c.b.body.0)));
        found.sort_unstable();
        found.dedup();
        // Changes of the claims on pairs kept elsewhere: to the owner of
        // the ghost of the first body. (A pair whose first body this rank
        // owns is its own; one whose first body it no longer holds is
        // dropped by its keeper.)
        let mut out = vec![Vec::new(); size];
        merge_changes(&self.found, &found, |kind, (a, b)| {
            if let Some(&(_, _, owner)) = self.held.get(&a) {
                out[owner].extend([kind, a, b]);
            }
        });
        self.found_spare = std::mem::replace(&mut self.found, found);
        self.stats.words_sent += out.iter().map(Vec::len).sum::<usize>();
        // Every rank passes `Ok`: the agreement only chooses the exchange.
        let received = self.exchange_near(out, Ok(())).unwrap_or_default();
        let mut gone = Vec::new();
        for (from, words) in received.iter().enumerate() {
            for d in words.chunks_exact(3) {
                let claim = ((d[1], d[2]), from as u32);
                if d[0] == NEW { self.claims.push(claim) } else { gone.push(claim) }
            }
        }
        gone.sort_unstable();
        self.claims.sort_unstable();
        self.claims.dedup();
        // A claim stands while its rank holds frames of the first body.
        let (owned, sent) = (&self.owned, &self.sent);
        let holds = |&((a, _), r): &((u64, u64), u32)| {
            owned.contains_key(&a) && sent.get(&a).is_some_and(|hs| hs.iter().any(|&(x, _)| x as u32 == r))
        };
        self.claims.retain(|c| gone.binary_search(c).is_err() && holds(c));
        // This step's pairs: the own finds but those of a ghost's, and the
        // claimed ones (all three sorted).
        self.ghost_first.sort_unstable();
        self.ghost_first.dedup();
        let mut now = std::mem::take(&mut self.pairs_spare);
        now.clear();
        let mut ghosts = self.ghost_first.iter().peekable();
        let mut claimed = self.claims.iter().map(|c| c.0).peekable();
        for &p in &self.found {
            while ghosts.next_if(|&&g| g < p).is_some() {}
            if ghosts.next_if(|&&g| g == p).is_some() {
                continue;
            }
            while let Some(c) = claimed.next_if(|&c| c <= p) {
                push_new(&mut now, c);
            }
            push_new(&mut now, p);
        }
        for c in claimed {
            push_new(&mut now, c);
        }
        let before = std::mem::replace(&mut self.pairs, now);
        // Started events first, then the ended pairs of two live bodies
        // (a pair of the last step names live bodies, but those removed
        // since, which every rank heard of).
        self.removed.sort_unstable();
        let removed = &self.removed;
        let live = |h: GlobalHandle| removed.binary_search(&h.0).is_err();
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        merge_changes(&before, &self.pairs, |kind, (a, b)| {
            if kind == NEW {
                events.push(GlobalEvent::Started(a, b));
            }
        });
        merge_changes(&before, &self.pairs, |kind, (a, b)| {
            if kind == GONE && live(a) && live(b) {
                events.push(GlobalEvent::Ended(a, b));
            }
        });
        self.events = events;
        self.pairs_spare = before;
        self.removed.clear();
    }

    /// The state of the body pairs this rank keeps for its body `id`,
    /// for the rank `id` migrates to, as threes `(id, b, w)`: the pairs
    /// reported in the last step (`w` = [`KEPT`]), the claims (`w` = the
    /// claiming rank), this rank's own finds among them (`w` = this rank:
    /// a claim, once `id` is kept elsewhere).
    pub(super) fn pair_state(&self, id: u64, out: &mut Vec<u64>) {
        let me = self.comm.rank() as u64;
        let first = |p: &(u64, u64)| p.0 < id;
        let found = &self.found[self.found.partition_point(first)..];
        out.extend(found.iter().take_while(|p| p.0 == id).flat_map(|&(a, b)| [a, b, me]));
        let claims = &self.claims[self.claims.partition_point(|c| first(&c.0))..];
        out.extend(claims.iter().take_while(|c| c.0.0 == id).flat_map(|&((a, b), r)| [a, b, u64::from(r)]));
        let pairs = &self.pairs[self.pairs.partition_point(|p| p.0.0 < id)..];
        out.extend(pairs.iter().take_while(|p| p.0.0 == id).flat_map(|&(a, b)| [a.0, b.0, KEPT]));
    }

    /// After a migration every rank agreed on: drops the pair state of the
    /// bodies that left and takes that of the bodies that arrived (a claim
    /// of this rank's own is its finds, in `found` already).
    pub(super) fn move_pairs(&mut self, leaving: &[(u64, BodyHandle)], state: &[[u64; 3]]) {
        if !leaving.is_empty() {
            let mut ids: Vec<u64> = leaving.iter().map(|&(id, _)| id).collect();
            ids.sort_unstable();
            let stays = |a: u64| ids.binary_search(&a).is_err();
            self.claims.retain(|c| stays(c.0.0));
            self.pairs.retain(|p| stays(p.0.0));
        }
        if state.is_empty() {
            return;
        }
        let me = self.comm.rank() as u64;
        for &[a, b, w] in state {
            if w == KEPT {
                self.pairs.push((GlobalHandle(a), GlobalHandle(b)));
            } else if w != me {
                self.claims.push(((a, b), w as u32));
            }
        }
        self.pairs.sort_unstable();
        self.pairs.dedup();
        self.claims.sort_unstable();
        self.claims.dedup();
    }
}

/// A claim's change: the pair appeared (`NEW`) or left (`GONE`).
const NEW: u64 = 1;
const GONE: u64 = 0;

/// Calls `change(GONE, p)` for each `p` of `old` not in `new`, and
/// `change(NEW, p)` for each of `new` not in `old` (both sorted, without
/// repeats).
fn merge_changes<T: Ord + Copy>(old: &[T], new: &[T], mut change: impl FnMut(u64, T)) {
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(o), Some(n)) if o == n => (i, j) = (i + 1, j + 1),
            (Some(&o), Some(n)) if o < *n => {
                change(GONE, o);
                i += 1;
            }
            (Some(&o), None) => {
                change(GONE, o);
                i += 1;
            }
            (_, Some(&n)) => {
                change(NEW, n);
                j += 1;
            }
            (None, None) => break,
        }
    }
}

/// Appends pair `p` to the sorted `list` unless it is its last already.
fn push_new(list: &mut Vec<(GlobalHandle, GlobalHandle)>, (a, b): (u64, u64)) {
    let p = (GlobalHandle(a), GlobalHandle(b));
    if list.last() != Some(&p) {
        list.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_changes_names_what_left_and_what_came() {
        let mut seen = Vec::new();
        merge_changes(&[1, 3, 5, 7], &[2, 3, 7, 8, 9], |k, p| seen.push((k, p)));
        assert_eq!(seen, [(GONE, 1), (NEW, 2), (GONE, 5), (NEW, 8), (NEW, 9)]);
        seen.clear();
        merge_changes(&[4], &[], |k, p| seen.push((k, p)));
        merge_changes(&[], &[6], |k, p| seen.push((k, p)));
        assert_eq!(seen, [(GONE, 4), (NEW, 6)]);
    }
}
