//! Agreement across ranks: every call that can fail on some ranks only
//! ends with every rank knowing it, so that all return the same error (or
//! all succeed) and none waits in a later collective; and the test hook
//! that makes one rank fail at a chosen stage.

use super::*;

/// The stages [`DistributedWorld::inject_fault`] can make fail on one
/// rank: `insert`, `remove`, `set` (a velocity or a pose), and in a step
/// `runaways`, `split`, `migrate-send`, `migrate-receive`, `ghosts-send`,
/// `ghosts-receive`, `step` (the local step, once prepared: it is then
/// called off on every rank).
#[doc(hidden)]
pub const FAULT_STAGES: [&str; 10] = [
    "insert",
    "remove",
    "set",
    "runaways",
    "split",
    "migrate-send",
    "migrate-receive",
    "ghosts-send",
    "ghosts-receive",
    "step",
];

/// The kinds of error an agreement carries: none (a payload follows), an
/// error of this rank alone, the owner's refusal, any other error (which
/// may be every rank's alike).
const OK: u64 = 0;
const ALONE: u64 = 1;
const REFUSED: u64 = 2;
const OTHER: u64 = 3;

impl<const D: usize, C: Comm> DistributedWorld<D, C> {
    /// Makes this rank fail, alone, the `skip + 1`th time it reaches
    /// `stage` (one of [`FAULT_STAGES`]), as if it had met an error the
    /// others did not: for the fault tests.
    #[doc(hidden)]
    pub fn inject_fault(&mut self, stage: &str, skip: usize) {
        self.fault = Some((stage.to_owned(), skip));
    }

    /// The injected fault, if it fires at `stage` now.
    pub(super) fn injected(&mut self, stage: &str) -> Result<(), DistributedError> {
        match &mut self.fault {
            Some((s, skip)) if s == stage => {
                if *skip > 0 {
                    *skip -= 1;
                    return Ok(());
                }
                self.fault = None;
                Err(DistributedError::OnRank { rank: self.comm.rank(), cause: format!("a fault injected at {stage}") })
            }
            _ => Ok(()),
        }
    }

    /// The digest of public call `call` with arguments `args`, and of what
    /// every rank must hold alike when it makes it: the ids issued, the
    /// bodies live, the configuration.
    pub(super) fn call_digest(&self, call: &str, args: impl IntoIterator<Item = u64>) -> u64 {
        let state = [self.next_id, self.bodies as u64, self.setup];
        call.bytes().map(u64::from).chain(state).chain(args).fold(DIGEST_SEED, mix)
    }

    /// The first reduction of a public call, which every rank makes with
    /// the same five words whatever the call: the maximum of `flag` over
    /// the ranks and the range of `aux` (a word the call checks itself:
    /// a step's `dt`), once all are known to be in the same call with the
    /// same arguments (`digest`, from [`DistributedWorld::call_digest`]:
    /// its maximum is the complement of its complement's only when it is
    /// the same everywhere). Else every rank returns
    /// [`DistributedError::Diverged`] and none goes on to the call's later
    /// collectives, which would pair with another call's (a rank removing
    /// a body while the others step; a batch one body short on one rank).
    pub(super) fn open_call(
        &self,
        call: &'static str,
        digest: u64,
        flag: u64,
        aux: u64,
    ) -> Result<(u64, [u64; 2]), DistributedError> {
        self.comm.begin_call(call);
        let agreed = self.comm.all_max_each(&[flag, aux, !aux, digest, !digest]);
        if agreed[3] != !agreed[4] {
            return Err(diverged(call));
        }
        Ok((agreed[0], [!agreed[2], agreed[1]]))
    }

    /// [`DistributedWorld::agree`] as a public call's first collective
    /// ([`DistributedWorld::open_call`]).
    pub(super) fn agree_call(
        &self,
        call: &'static str,
        digest: u64,
        mine: Result<(), DistributedError>,
    ) -> Result<(), DistributedError> {
        let (failed, _) = self.open_call(call, digest, u64::from(mine.is_err()), 0)?;
        self.agree_flagged(failed, mine)
    }

    /// Every rank's result, agreed: a reduction of the error flag, and on
    /// an error a gather of the causes (see [`DistributedError`]).
    pub(super) fn agree(&self, mine: Result<(), DistributedError>) -> Result<(), DistributedError> {
        let failed = self.comm.all_max(u64::from(mine.is_err()));
        self.agree_flagged(failed, mine)
    }

    /// The end of an agreement once the error flag's maximum, `failed`, is
    /// known: on an error, a gather of the causes.
    fn agree_flagged(&self, failed: u64, mine: Result<(), DistributedError>) -> Result<(), DistributedError> {
        if failed == 0 {
            return Ok(());
        }
        let words = match &mine {
            Ok(()) => Vec::new(),
            Err(e) => error_words(e),
        };
        agreed(&self.comm.all_gather(words), mine)
    }

    /// As [`DistributedWorld::agree_call`], for public call `call` on body
    /// `h`, which lives when some rank owns it (only the owner knows): one
    /// reduction of a flag that also says whether this rank owns `h`. Every
    /// rank returns [`DistributedError::StaleHandle`] when no rank owns it,
    /// before any other error (as when each rank could tell).
    pub(super) fn agree_on(
        &self,
        call: &'static str,
        digest: u64,
        h: GlobalHandle,
        mine: Result<(), DistributedError>,
    ) -> Result<(), DistributedError> {
        let owns = || u64::from(self.owned.contains_key(&h.0));
        // 0: no rank owns it; 1: some does, and no rank failed; 2: some failed.
        let flag = if mine.is_err() { 2 } else { owns() };
        match self.open_call(call, digest, flag, 0)?.0 {
            0 => Err(DistributedError::StaleHandle(h)),
            1 => Ok(()),
            // Whether it lives, then the error (rare: reductions are cheap).
            _ if self.comm.all_max(owns()) == 0 => Err(DistributedError::StaleHandle(h)),
            _ => self.agree(mine),
        }
    }

    /// [`Comm::all_gather`] of this rank's words, or of its error: every
    /// rank's words when no rank failed, else the agreed error.
    pub(super) fn gather_checked(
        &self,
        mine: Result<Vec<u64>, DistributedError>,
    ) -> Result<Vec<Vec<u64>>, DistributedError> {
        let (words, mine) = match mine {
            Ok(mut w) => {
                w.insert(0, OK);
                (w, Ok(()))
            }
            Err(e) => (error_words(&e), Err(e)),
        };
        strip(self.comm.all_gather(words), mine)
    }

    /// As [`DistributedWorld::exchange_checked`], through
    /// [`Comm::exchange_among`] the peers (ranks whose regions touch this
    /// one's) when every rank's buffers go to its peers only and no rank
    /// failed (agreed first: one reduction); else the all-to-all.
    pub(super) fn exchange_near(
        &self,
        out: Vec<Vec<u64>>,
        mine: Result<(), DistributedError>,
    ) -> Result<Vec<Vec<u64>>, DistributedError> {
        let me = self.comm.rank();
        let peer = |r: usize| r == me || self.peers.binary_search(&r).is_ok();
        let near = mine.is_ok() && out.iter().enumerate().all(|(r, w)| w.is_empty() || peer(r));
        if self.comm.all_max(u64::from(!near)) != 0 {
            return self.exchange_checked(out, mine);
        }
        Ok(self.comm.exchange_among(&self.peers, out))
    }

    /// [`Comm::exchange`] of this rank's buffers, or of its error (sent to
    /// every rank instead): what each rank sent when no rank failed, else
    /// the agreed error.
    pub(super) fn exchange_checked(
        &self,
        mut out: Vec<Vec<u64>>,
        mine: Result<(), DistributedError>,
    ) -> Result<Vec<Vec<u64>>, DistributedError> {
        match &mine {
            Ok(()) => out.iter_mut().for_each(|w| w.insert(0, OK)),
            Err(e) => out = vec![error_words(e); self.comm.size()],
        }
        strip(self.comm.exchange(out), mine)
    }
}

/// The start of a [`DistributedWorld::call_digest`].
const DIGEST_SEED: u64 = 0xCBF2_9CE4_8422_2325;

/// `h` with word `w` folded in (a multiply and a shift: each bit of `w`
/// reaches the high bits, the shift brings them back down).
pub(super) fn mix(h: u64, w: u64) -> u64 {
    let h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

/// The error of ranks found in different calls, or in one call with
/// different arguments.
fn diverged(call: &'static str) -> DistributedError {
    let what = "not every rank made this call with these arguments on the same world (another call, other \
                arguments or another configuration on some rank, or bodies inserted or removed on some ranks \
                only); nothing changed"
        .to_owned();
    DistributedError::Diverged { call, what }
}

/// An error as the words an agreement carries: its kind, a body, its text.
fn error_words(e: &DistributedError) -> Vec<u64> {
    match e {
        DistributedError::Refused { body, message } => [vec![REFUSED, body.0], text_words(message)].concat(),
        DistributedError::OnRank { cause, .. } => [vec![ALONE, 0], text_words(cause)].concat(),
        e => [vec![OTHER, 0], text_words(&e.to_string())].concat(),
    }
}

/// The words of every rank without their headers, or the agreed error.
fn strip(mut all: Vec<Vec<u64>>, mine: Result<(), DistributedError>) -> Result<Vec<Vec<u64>>, DistributedError> {
    agreed(&all, mine)?;
    for w in &mut all {
        w.remove(0);
    }
    Ok(all)
}

/// The error every rank returns, from every rank's words (empty or headed
/// by `OK`: no error): the lowest failing rank's, as
/// [`DistributedError::Refused`] for an owner's refusal; an error every
/// rank met alike as it is (this rank's own); else as
/// [`DistributedError::OnRank`].
fn agreed(all: &[Vec<u64>], mine: Result<(), DistributedError>) -> Result<(), DistributedError> {
    let failed = |w: &Vec<u64>| w.first().is_some_and(|&k| k != OK);
    let Some((rank, first)) = all.iter().enumerate().find(|(_, w)| failed(w)) else { return Ok(()) };
    let cause = text_from_words(first.get(2..).unwrap_or(&[]));
    match first[0] {
        REFUSED => {
            Err(DistributedError::Refused { body: GlobalHandle(first.get(1).copied().unwrap_or(0)), message: cause })
        }
        OTHER if all.iter().all(|w| w == first) => mine.and(Err(DistributedError::OnRank { rank, cause })),
        _ => Err(DistributedError::OnRank { rank, cause }),
    }
}

/// Panics on an error that the checks before an agreement ruled out: the
/// rank is inconsistent (a bug), and ends (under MPI the whole job).
pub(super) fn sure<T>(r: Result<T, WorldError>) -> T {
    r.unwrap_or_else(|e| panic!("a distributed world's rank is inconsistent: {e}"))
}
