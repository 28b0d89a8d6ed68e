//! The thread pool of the benchmark programs: `--threads T` runs the whole
//! program inside a rayon pool of `T` threads (one thread, with a note, when
//! built without the `parallel` feature).

/// Threads of the pool the benchmark runs in.
pub fn pool_threads() -> usize {
    #[cfg(feature = "parallel")]
    return rayon::current_num_threads();
    #[cfg(not(feature = "parallel"))]
    1
}

/// Runs `f` in a pool of `threads` threads.
pub fn run_with_threads(threads: usize, f: impl FnOnce() + Send) {
    #[cfg(feature = "parallel")]
    {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
        pool.install(f);
    }
    #[cfg(not(feature = "parallel"))]
    {
        if threads > 1 {
            eprintln!("built without the `parallel` feature: running on one thread");
        }
        f();
    }
}
