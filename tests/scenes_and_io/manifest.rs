//! The manifest keeps the README's promises on a fresh clone: `cargo run
//! --release` runs the scene runner, however many binaries there are, and
//! the README's test command needs nothing but the Rust toolchain.

#[test]
fn cargo_run_has_one_binary_to_run() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).expect("the manifest");
    let manifest: toml::Table = text.parse().expect("valid TOML");
    let bins = manifest.get("bin").and_then(|b| b.as_array()).map_or(0, Vec::len);
    let default = manifest["package"].get("default-run").and_then(|d| d.as_str());
    assert!(bins <= 1 || default == Some("fmbgrid"), "{bins} binaries and default-run {default:?}");
}

/// Features whose dependencies link system libraries (`mpi`: Open MPI and
/// libclang), and those dependencies: a newcomer's machine has neither.
const SYSTEM_LIBRARY_FEATURES: &[&str] = &["mpi"];
const SYSTEM_LIBRARY_DEPENDENCIES: &[&str] = &["mpi"];

fn read(file: &str) -> String {
    std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).expect(file)
}

/// The first line of the sh block under the README's heading `## {section}`.
fn readme_command(readme: &str, section: &str) -> String {
    let heading = format!("## {section}\n");
    let after = &readme[readme.find(&heading).unwrap_or_else(|| panic!("README has no {heading}")) + heading.len()..];
    let block = &after[after.find("```sh\n").expect("an sh block") + 6..];
    block.lines().next().expect("a command").trim().to_string()
}

/// Every feature (and `dep:` dependency) that `features` turns on.
fn expand(table: &toml::Table, features: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut on: Vec<String> = Vec::new();
    let mut todo: Vec<String> = features.into_iter().collect();
    while let Some(f) = todo.pop() {
        if on.contains(&f) {
            continue;
        }
        if let Some(list) = table.get(&f).and_then(|v| v.as_array()) {
            todo.extend(list.iter().filter_map(|v| v.as_str()).map(str::to_string));
        }
        on.push(f);
    }
    on
}

#[test]
fn readme_test_command_needs_only_the_toolchain() {
    let readme = read("README.md");
    let command = readme_command(&readme, "Test");
    assert!(command.starts_with("cargo test"), "{command}");
    let manifest: toml::Table = read("Cargo.toml").parse().expect("valid TOML");
    let table = manifest["features"].as_table().expect("a [features] table");
    let words: Vec<&str> = command.split_whitespace().collect();
    assert!(!words.contains(&"--all-features"), "{command}");
    let mut asked: Vec<String> = words
        .iter()
        .position(|w| *w == "--features")
        .map(|i| words[i + 1].split(',').map(str::to_string).collect())
        .unwrap_or_default();
    if !words.contains(&"--no-default-features") {
        asked.push("default".into());
    }
    for feature in &asked {
        assert!(table.contains_key(feature), "the README asks for an unknown feature {feature}");
    }
    let on = expand(table, asked);
    for f in SYSTEM_LIBRARY_FEATURES {
        assert!(!on.iter().any(|x| x == f), "`{command}` turns on `{f}`, which needs system libraries");
    }
    for d in SYSTEM_LIBRARY_DEPENDENCIES {
        assert!(!on.iter().any(|x| *x == format!("dep:{d}")), "`{command}` builds `{d}`, which needs system libraries");
    }
}

#[test]
fn system_libraries_come_only_through_their_features() {
    let manifest: toml::Table = read("Cargo.toml").parse().expect("valid TOML");
    let table = manifest["features"].as_table().expect("a [features] table");
    let deps = manifest["dependencies"].as_table().expect("[dependencies]");
    for d in SYSTEM_LIBRARY_DEPENDENCIES {
        let optional = deps.get(*d).and_then(|v| v.get("optional")).and_then(|v| v.as_bool());
        assert_eq!(optional, Some(true), "`{d}` must stay an optional dependency");
    }
    for (feature, _) in table {
        if SYSTEM_LIBRARY_FEATURES.contains(&feature.as_str()) {
            continue;
        }
        let on = expand(table, [feature.clone()]);
        for d in SYSTEM_LIBRARY_DEPENDENCIES {
            let needs = on.iter().any(|x| *x == format!("dep:{d}") || SYSTEM_LIBRARY_FEATURES.contains(&x.as_str()));
            assert!(
                !needs,
                "feature `{feature}` pulls in `{d}`: add it to SYSTEM_LIBRARY_FEATURES and keep it out of the README's test command"
            );
        }
    }
}

#[test]
fn mpi_tests_have_their_own_command() {
    let readme = read("README.md");
    assert!(readme.contains("cargo test --release --features mpi --test mpi"), "the README names the MPI command");
    assert!(read(".ci/run").contains("cargo test --release --features mpi --test mpi"), "CI runs it");
}

/// The integration tests build into a few binaries: the suite
/// (`tests/suite.rs`), whose areas are folders (`tests/<area>/mod.rs`), plus
/// the crates that must stay alone (`world_allocations.rs` and
/// `world_low_memory.rs` install a global allocator; `mpi.rs` needs the
/// `mpi` feature). A folder the suite does not declare, or a file in an
/// area folder that its `mod.rs` does not, would never be compiled, and its
/// tests would silently not run.
#[test]
fn integration_tests_are_a_few_crates_that_declare_every_file() {
    const ALONE: &[&str] = &["suite.rs", "mpi.rs", "world_allocations.rs", "world_low_memory.rs"];
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = read("tests/suite.rs");
    let declares = |text: &str, stem: &str| text.lines().any(|l| l.trim() == format!("mod {stem};"));
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(&tests).expect("tests/") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("a UTF-8 name").to_string();
        if path.is_file() && name.ends_with(".rs") {
            assert!(
                ALONE.contains(&name.as_str()),
                "tests/{name} is a test binary of its own: make it a module of the suite (tests/<area>/)"
            );
            crates.push(name);
        } else if path.join("main.rs").is_file() {
            panic!("tests/{name}/main.rs is a test binary of its own: make the folder an area of tests/suite.rs");
        } else if name != "support" && path.join("mod.rs").is_file() {
            assert!(declares(&suite, &name), "tests/suite.rs does not declare `mod {name};`: its tests never run");
            let area = std::fs::read_to_string(path.join("mod.rs")).expect("mod.rs");
            for file in std::fs::read_dir(&path).expect("an area folder") {
                let file = file.expect("an entry").path();
                let stem = file.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 name");
                if file.extension().is_some_and(|e| e == "rs") && stem != "mod" {
                    assert!(
                        declares(&area, stem),
                        "tests/{name}/mod.rs does not declare `mod {stem};`: its tests never run"
                    );
                }
            }
        }
    }
    assert!(crates.len() <= 4, "{} integration-test crates: {crates:?}", crates.len());
}
