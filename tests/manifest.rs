//! The manifest keeps `cargo run --release` on a fresh clone running the
//! scene runner, as the README says, however many binaries there are.

#[test]
fn cargo_run_has_one_binary_to_run() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).expect("the manifest");
    let manifest: toml::Table = text.parse().expect("valid TOML");
    let bins = manifest.get("bin").and_then(|b| b.as_array()).map_or(0, Vec::len);
    let default = manifest["package"].get("default-run").and_then(|d| d.as_str());
    assert!(bins <= 1 || default == Some("fmbgrid"), "{bins} binaries and default-run {default:?}");
}
