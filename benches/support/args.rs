//! The command line of a benchmark program (included with `#[path]`):
//! its arguments without the program's name and without the `--bench`
//! that `cargo bench` appends to every bench target's command line.
#![allow(dead_code)]

/// The program's arguments, `cargo bench`'s `--bench` left out.
pub fn args() -> Vec<String> {
    std::env::args().skip(1).filter(|a| a != "--bench").collect()
}

/// The value after `--name`, if given.
pub fn value(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}
