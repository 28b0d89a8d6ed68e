//! How the ranks of a distributed world talk: one bulk-synchronous
//! exchange, every rank sending a buffer of words to every rank. MPI
//! (`MpiComm`, feature `mpi`) between processes; [`LocalComm`] between
//! threads of one process, for tests and for trying a split on one
//! machine.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A group of ranks that exchange buffers of `u64` words collectively:
/// every rank of the group must call [`Comm::exchange`] the same number
/// of times, in the same order.
pub trait Comm {
    /// This rank, `0..size()`.
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.rank(), 0);
    /// ```
    fn rank(&self) -> usize;
    /// How many ranks the group has.
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.size(), 1);
    /// ```
    fn size(&self) -> usize;
    /// Sends `out[r]` to rank `r` (one buffer per rank, this one's own
    /// included) and returns what each rank sent to this one, by rank.
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.exchange(vec![vec![1, 2]]), vec![vec![1, 2]]); // to itself
    /// ```
    fn exchange(&self, out: Vec<Vec<u64>>) -> Vec<Vec<u64>>;

    /// As [`Comm::exchange`] when only neighbours talk: every rank sends
    /// an empty buffer to every rank outside its `peers` (itself aside),
    /// so only the peers' buffers travel (`MpiComm`: one point-to-point
    /// message to and from each peer, instead of an all-to-all over every
    /// rank). `peers` must be symmetric (rank `r` lists `s` exactly when
    /// `s` lists `r`), sorted, without this rank; a buffer to a rank
    /// outside them is not sent, and what a non-peer sends is not
    /// received (empty). The default makes the all-to-all.
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.exchange_among(&[], vec![vec![4]]), vec![vec![4]]); // to itself
    /// ```
    fn exchange_among(&self, peers: &[usize], out: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        let me = self.rank();
        let mut received = self.exchange(out);
        for (r, words) in received.iter_mut().enumerate() {
            if r != me && peers.binary_search(&r).is_err() {
                words.clear();
            }
        }
        received
    }

    /// Every rank's `mine`, by rank, on every rank.
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.all_gather(vec![3]), vec![vec![3]]);
    /// ```
    fn all_gather(&self, mine: Vec<u64>) -> Vec<Vec<u64>> {
        self.exchange(vec![mine; self.size()])
    }

    /// The sum of every rank's `mine` (saturating), on every rank
    /// (`MpiComm` makes it one `MPI_Allreduce`).
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.all_sum(5), 5);
    /// ```
    fn all_sum(&self, mine: u64) -> u64 {
        self.all_gather(vec![mine]).iter().filter_map(|w| w.first().copied()).fold(0, u64::saturating_add)
    }

    /// The sums, element by element, of every rank's `mine` (saturating;
    /// every rank passes as many words), on every rank (`MpiComm` makes it
    /// one `MPI_Allreduce`): the histograms of a split.
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.all_sum_each(&[5, 7]), [5, 7]);
    /// ```
    fn all_sum_each(&self, mine: &[u64]) -> Vec<u64> {
        let mut sum = vec![0u64; mine.len()];
        for words in self.all_gather(mine.to_vec()) {
            sum.iter_mut().zip(&words).for_each(|(s, w)| *s = s.saturating_add(*w));
        }
        sum
    }

    /// The largest, element by element, of every rank's `mine` (every rank
    /// passes as many words), on every rank (`MpiComm` makes it one
    /// `MPI_Allreduce`).
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.all_max_each(&[5, 7]), [5, 7]);
    /// ```
    fn all_max_each(&self, mine: &[u64]) -> Vec<u64> {
        let mut max = mine.to_vec();
        for words in self.all_gather(mine.to_vec()) {
            max.iter_mut().zip(&words).for_each(|(m, w)| *m = (*m).max(*w));
        }
        max
    }

    /// The largest of every rank's `mine`, on every rank (the agreement on
    /// an error flag; `MpiComm` makes it one `MPI_Allreduce`).
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(comm.all_max(5), 5);
    /// ```
    fn all_max(&self, mine: u64) -> u64 {
        self.all_gather(vec![mine]).iter().filter_map(|w| w.first().copied()).max().unwrap_or(mine)
    }

    /// Called by a [`DistributedWorld`](super::DistributedWorld) as each
    /// of its public calls begins (`call`: its name), for communicators
    /// that name the call in their reports (`MpiComm::with_deadline`).
    /// The default does nothing.
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// LocalComm::group(1).pop().unwrap().begin_call("step"); // nothing to do
    /// ```
    fn begin_call(&self, call: &'static str) {
        let _ = call;
    }
}

/// Ranks that are threads of one process, exchanging through shared
/// memory: [`LocalComm::group`] makes one per rank, to move each into its
/// own thread.
///
/// ```
/// use fmbgrid::distributed::{Comm, LocalComm};
/// let sums: Vec<u64> = std::thread::scope(|s| {
///     let ranks = LocalComm::group(3).into_iter().map(|c| {
///         s.spawn(move || c.all_gather(vec![c.rank() as u64]).iter().map(|b| b[0]).sum())
///     });
///     ranks.collect::<Vec<_>>().into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(sums, [3, 3, 3]);
/// ```
#[derive(Debug)]
pub struct LocalComm {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    turn: Condvar,
}

#[derive(Debug)]
struct State {
    /// `mail[to][from]`: what `from` sent to `to` in the current exchange.
    mail: Vec<Vec<Vec<u64>>>,
    /// Ranks waiting at the barrier, and how many barriers have passed.
    arrived: usize,
    passed: u64,
    /// A rank's communicator was dropped (its thread panicked, or it
    /// returned while the others go on): the others must not wait for it.
    broken: bool,
}

impl LocalComm {
    /// One communicator per rank of a group of `size` ranks (at least 1).
    ///
    /// ```
    /// use fmbgrid::distributed::{Comm, LocalComm};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// assert_eq!(LocalComm::group(4).len(), 4);
    /// assert_eq!(comm.size(), 1);
    /// ```
    pub fn group(size: usize) -> Vec<LocalComm> {
        let size = size.max(1);
        let state = State { mail: vec![vec![Vec::new(); size]; size], arrived: 0, passed: 0, broken: false };
        let shared = Arc::new(Shared { state: Mutex::new(state), turn: Condvar::new() });
        (0..size).map(|rank| LocalComm { rank, size, shared: Arc::clone(&shared) }).collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits until every rank has arrived; panics instead of waiting
    /// forever when a rank's communicator is gone (its thread panicked, or
    /// it returned early: a rank that leaves while the others call
    /// collectives is a bug of the caller's, which a hang would hide).
    fn barrier(&self) {
        const GONE: &str = "a rank of this LocalComm group is gone (it panicked, or dropped its communicator \
                            while the others went on calling collectives)";
        let mut state = self.lock();
        assert!(!state.broken, "{GONE}");
        state.arrived += 1;
        if state.arrived == self.size {
            state.arrived = 0;
            state.passed += 1;
            self.shared.turn.notify_all();
            return;
        }
        let passed = state.passed;
        while state.passed == passed && !state.broken {
            state = self.shared.turn.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        // A rank may leave once the last barrier has passed: only a barrier
        // that cannot pass is an error.
        assert!(state.passed != passed, "{GONE}");
    }
}

impl Drop for LocalComm {
    /// A dropped rank (its thread unwinding, or done) breaks the group, so
    /// that the others fail at their next collective instead of waiting
    /// for it; ranks that all finish together never notice.
    fn drop(&mut self) {
        self.lock().broken = true;
        self.shared.turn.notify_all();
    }
}

impl Comm for LocalComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn exchange(&self, out: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        {
            let mut state = self.lock();
            for (to, buf) in out.into_iter().enumerate().take(self.size) {
                state.mail[to][self.rank] = buf;
            }
        }
        // Everyone has written before anyone reads, and everyone has read
        // before the next exchange writes.
        self.barrier();
        let received = std::mem::replace(&mut self.lock().mail[self.rank], vec![Vec::new(); self.size]);
        self.barrier();
        received
    }
}

/// MPI between processes (`mpirun -np N`): the exchange is an
/// `MPI_Alltoall` of the counts, then an `MPI_Alltoallv` of the words.
///
/// ```no_run
/// use fmbgrid::distributed::{Comm, DistributedWorld, MpiComm};
/// let universe = mpi::initialize().expect("MPI starts once");
/// let world = DistributedWorld::<3, _>::new(MpiComm::world(&universe), fmbgrid::WorldConfig::default());
/// println!("rank {} of {}", world.comm().rank(), world.comm().size());
/// ```
#[cfg(feature = "mpi")]
#[cfg_attr(docsrs, doc(cfg(feature = "mpi")))]
pub struct MpiComm {
    world: mpi::topology::SimpleCommunicator,
    /// The deadline's watch, when one is set ([`MpiComm::with_deadline`]).
    watch: Option<Arc<deadline::Watch>>,
}

#[cfg(feature = "mpi")]
impl MpiComm {
    /// The communicator of every process of the run (`MPI_COMM_WORLD`);
    /// keep the universe alive while it is used (MPI finalizes when the
    /// universe drops).
    ///
    /// Installs a panic hook (once) that, after the usual report, calls
    /// `MPI_Abort`: a rank that panics ends the whole job with a non-zero
    /// status instead of leaving the others waiting in a collective. (A
    /// rank killed by a signal, or one that exits without finalizing, is
    /// `mpirun`'s to notice: Open MPI then ends the job, non-zero.)
    pub fn world(universe: &mpi::environment::Universe) -> Self {
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let report = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                report(info);
                use mpi::traits::Communicator;
                mpi::topology::SimpleCommunicator::world().abort(101);
            }));
        });
        MpiComm { world: universe.world(), watch: None }
    }

    /// This communicator with a deadline: a rank that has waited `limit`
    /// in one collective (an `MPI_Allreduce`, an all-to-all, a neighbour
    /// exchange) prints which public call of the world it was in and ends
    /// the job (it kills itself; `mpirun` then ends every rank, non-zero),
    /// instead of waiting forever for a rank that returned early, crashed
    /// without ending the job, or is in another call. A watchdog thread
    /// looks every `limit / 10` (at most every 100 ms).
    ///
    /// A collective also waits for the slowest rank's work before it (a
    /// rank's step, its share of a migration): choose `limit` well above
    /// the longest such wait, ten times a step's time for instance. The
    /// rank that returned early waits too, in MPI's finalization, and
    /// `mpirun` does not always end it: bound that wait as `fmbgrid-mpi
    /// --deadline` does (a thread, started as `main` returns, that ends
    /// the process after `limit`).
    ///
    /// ```no_run
    /// use fmbgrid::distributed::MpiComm;
    /// let universe = mpi::initialize().expect("MPI starts once");
    /// let comm = MpiComm::world(&universe).with_deadline(std::time::Duration::from_secs(60));
    /// ```
    pub fn with_deadline(mut self, limit: std::time::Duration) -> Self {
        use mpi::traits::Communicator;
        self.watch = Some(deadline::Watch::start(limit, self.world.rank() as usize));
        self
    }

    /// Arms the deadline (if any) for the collective `name` until the
    /// guard drops.
    fn armed(&self, name: &'static str) -> Option<deadline::Armed<'_>> {
        self.watch.as_deref().map(|w| w.arm(name))
    }
}

/// The watchdog of [`MpiComm::with_deadline`].
#[cfg(feature = "mpi")]
mod deadline {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    /// What the watchdog reads: when the pending collective began, and
    /// its name and the world's call it serves.
    pub(super) struct Watch {
        limit: Duration,
        rank: usize,
        epoch: Instant,
        /// Nanoseconds from `epoch` at which the pending collective began,
        /// plus one; zero while none is pending.
        since: AtomicU64,
        /// The pending collective, and the world's call last begun.
        names: Mutex<(&'static str, &'static str)>,
    }

    /// A pending collective: disarms the watch when dropped.
    pub(super) struct Armed<'a>(&'a Watch);

    impl Drop for Armed<'_> {
        fn drop(&mut self) {
            self.0.since.store(0, Ordering::Release);
        }
    }

    impl Watch {
        /// A watch of `limit` for rank `rank`, and its watchdog thread
        /// (which ends once the communicator is dropped).
        pub(super) fn start(limit: Duration, rank: usize) -> Arc<Watch> {
            let watch = Arc::new(Watch {
                limit,
                rank,
                epoch: Instant::now(),
                since: AtomicU64::new(0),
                names: Mutex::new(("none", "none")),
            });
            let weak = Arc::downgrade(&watch);
            let tick = (limit / 10).clamp(Duration::from_millis(1), Duration::from_millis(100));
            std::thread::spawn(move || {
                while let Some(watch) = weak.upgrade() {
                    watch.check();
                    drop(watch);
                    std::thread::sleep(tick);
                }
            });
            watch
        }

        /// The world's call `call` begins.
        pub(super) fn begin_call(&self, call: &'static str) {
            self.names.lock().unwrap_or_else(|e| e.into_inner()).1 = call;
        }

        /// Collective `name` begins.
        pub(super) fn arm(&self, name: &'static str) -> Armed<'_> {
            self.names.lock().unwrap_or_else(|e| e.into_inner()).0 = name;
            let now = self.epoch.elapsed().as_nanos() as u64;
            self.since.store(now + 1, Ordering::Release);
            Armed(self)
        }

        /// Ends the process when the pending collective has waited past
        /// the limit: MPI cannot be called from this thread (the library
        /// runs single-threaded), so the process kills itself and `mpirun`
        /// ends the job. With `SIGKILL`: Open MPI's handler of `SIGABRT`
        /// sometimes never returned here (1 run in 4), the job left hanging.
        fn check(&self) {
            let since = self.since.load(Ordering::Acquire);
            if since == 0 {
                return;
            }
            let waited = Duration::from_nanos((self.epoch.elapsed().as_nanos() as u64).saturating_sub(since - 1));
            if waited > self.limit {
                let (collective, call) = *self.names.lock().unwrap_or_else(|e| e.into_inner());
                eprintln!(
                    "fmbgrid: rank {}: `{call}` waited more than {:?} for the other ranks in its collective \
                     `{collective}` (a rank that returned early or died, or ranks in different calls): \
                     ending the job",
                    self.rank, self.limit
                );
                let me = std::process::id().to_string();
                let _ = std::process::Command::new("kill").args(["-9", &me]).status();
                // Only if `kill` could not be run.
                std::process::abort();
            }
        }
    }
}

#[cfg(feature = "mpi")]
impl Comm for MpiComm {
    fn begin_call(&self, call: &'static str) {
        if let Some(watch) = &self.watch {
            watch.begin_call(call);
        }
    }

    fn rank(&self) -> usize {
        use mpi::traits::Communicator;
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        use mpi::traits::Communicator;
        self.world.size() as usize
    }

    fn all_max(&self, mine: u64) -> u64 {
        use mpi::collective::SystemOperation;
        use mpi::traits::CommunicatorCollectives;
        let _armed = self.armed("all_max");
        let mut max = 0u64;
        self.world.all_reduce_into(&mine, &mut max, SystemOperation::max());
        max
    }

    /// Point to point: a non-blocking send to each peer, then a receive
    /// from each (a probe, so any length), then the sends completed.
    fn exchange_among(&self, peers: &[usize], mut out: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        use mpi::point_to_point::{Destination, Source};
        use mpi::traits::Communicator;
        /// The tag of a neighbour exchange's messages (collectives do not
        /// match point-to-point messages; successive exchanges between
        /// two ranks arrive in order).
        const TAG: mpi::Tag = 23;
        let _armed = self.armed("exchange_among");
        let me = self.rank();
        let mut received = vec![Vec::new(); out.len()];
        if let (Some(mine), Some(slot)) = (out.get_mut(me), received.get_mut(me)) {
            *slot = std::mem::take(mine);
        }
        let peers: Vec<usize> = peers.iter().copied().filter(|&r| r != me && r < out.len()).collect();
        mpi::request::scope(|scope| {
            let sends: Vec<_> = peers
                .iter()
                .map(|&r| self.world.process_at_rank(r as mpi::Rank).immediate_send_with_tag(scope, &out[r][..], TAG))
                .collect();
            for &r in &peers {
                received[r] = self.world.process_at_rank(r as mpi::Rank).receive_vec_with_tag::<u64>(TAG).0;
            }
            for send in sends {
                send.wait();
            }
        });
        received
    }

    fn all_sum(&self, mine: u64) -> u64 {
        use mpi::collective::SystemOperation;
        use mpi::traits::CommunicatorCollectives;
        let _armed = self.armed("all_sum");
        let mut sum = 0u64;
        self.world.all_reduce_into(&mine, &mut sum, SystemOperation::sum());
        sum
    }

    fn all_sum_each(&self, mine: &[u64]) -> Vec<u64> {
        use mpi::collective::SystemOperation;
        use mpi::traits::CommunicatorCollectives;
        let _armed = self.armed("all_sum_each");
        let mut sum = vec![0u64; mine.len()];
        self.world.all_reduce_into(mine, &mut sum[..], SystemOperation::sum());
        sum
    }

    fn all_max_each(&self, mine: &[u64]) -> Vec<u64> {
        use mpi::collective::SystemOperation;
        use mpi::traits::CommunicatorCollectives;
        let _armed = self.armed("all_max_each");
        let mut max = vec![0u64; mine.len()];
        self.world.all_reduce_into(mine, &mut max[..], SystemOperation::max());
        max
    }

    fn exchange(&self, out: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        use mpi::datatype::{Partition, PartitionMut};
        use mpi::traits::CommunicatorCollectives;
        let _armed = self.armed("exchange");
        let count = |n: usize| mpi::Count::try_from(n).expect("an exchange of fewer than 2^31 words per rank");
        let send_counts: Vec<mpi::Count> = out.iter().map(|b| count(b.len())).collect();
        let mut recv_counts = vec![0 as mpi::Count; out.len()];
        self.world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        // MPI counts and offsets are 32-bit: an exchange past 2^31 words a
        // rank cannot be expressed (documented as a limit of this world).
        let offsets = |counts: &[mpi::Count]| -> Vec<mpi::Count> {
            counts
                .iter()
                .scan(0 as mpi::Count, |at, &n| {
                    let here = *at;
                    *at = at.checked_add(n).expect("an exchange of fewer than 2^31 words per rank");
                    Some(here)
                })
                .collect()
        };
        let (send_at, recv_at) = (offsets(&send_counts), offsets(&recv_counts));
        let flat: Vec<u64> = out.concat();
        let mut received = vec![0u64; recv_counts.iter().map(|&n| n as usize).sum()];
        {
            let send = Partition::new(&flat[..], &send_counts[..], &send_at[..]);
            let mut recv = PartitionMut::new(&mut received[..], &recv_counts[..], &recv_at[..]);
            self.world.all_to_all_varcount_into(&send, &mut recv);
        }
        recv_at.iter().zip(&recv_counts).map(|(&at, &n)| received[at as usize..(at + n) as usize].to_vec()).collect()
    }
}
