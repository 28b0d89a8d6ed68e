#!/usr/bin/env bash
# Seeds the corpora from the repository's meshes and fixtures, then runs
# each fuzz target for SECONDS (default 480) seconds, one after another.
# Needs cargo-fuzz (`cargo install cargo-fuzz`); on a stable toolchain it
# sets RUSTC_BOOTSTRAP=1, as cargo fuzz needs nightly flags.
# Usage, from anywhere: bash fuzz/run_all.sh [SECONDS]
set -euo pipefail
seconds=${1:-480}
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
c=fuzz/corpus
mkdir -p $c/parse_obj $c/parse_stl $c/parse_ply $c/parse_tetgen $c/parse_msh $c/world_ops $c/scene_file $c/thin_pairs
cp assets/scenes/*.toml $c/scene_file/
cp assets/meshes/*.obj tests/data/mesh/nan.obj $c/parse_obj/
cp assets/meshes/bunny.stl tests/data/mesh/garbage.stl $c/parse_stl/
cp assets/meshes/bunny.ply tests/data/mesh/*.ply $c/parse_ply/
# parse_tetgen splits its input at the first NUL into .node and .ele.
for stem in assets/meshes/cube_tets tests/data/mesh/bad_index; do
  { cat $stem.node; printf '\0'; cat $stem.ele; } > $c/parse_tetgen/"$(basename $stem)"
done
cp tests/data/mesh/*.msh $c/parse_msh/
printf '$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n$Elements\n1 1 1 1\n3 1 4 1\n1 1 2 3 4\n$EndElements\n' > $c/parse_msh/tet.msh
cd fuzz
for t in parse_obj parse_stl parse_ply parse_tetgen parse_msh world_ops scene_file thin_pairs; do
  echo "== $t"
  RUSTC_BOOTSTRAP=1 cargo fuzz run -O $t corpus/$t -- -max_total_time=$seconds -max_len=65536 \
    -rss_limit_mb=4096 -timeout=30 -print_final_stats=1
done
