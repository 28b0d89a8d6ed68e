//! The command line of a benchmark program (included with `#[path]`):
//! its arguments without the program's name and without the `--bench`
//! that `cargo bench` appends to every bench target's command line.
#![allow(dead_code)]

/// The program's arguments, `cargo bench`'s `--bench` left out.
///
/// Run by cargo without `--bench`, the program is under `cargo test`
/// (`--benches`, `--all-targets`), which passes no arguments: it exits at
/// once rather than run its default, minutes-long workload. Run directly
/// (a profiler, `benches/support/bench-bin`), it runs as asked.
pub fn args() -> Vec<String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if std::env::var_os("CARGO").is_some() && !args.iter().any(|a| a == "--bench") {
        eprintln!("a benchmark program: `cargo bench --bench NAME -- ARGS` runs it; under cargo test it only starts");
        std::process::exit(0);
    }
    args.into_iter().filter(|a| a != "--bench").collect()
}

/// The value after `--name`, if given.
pub fn value(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}
