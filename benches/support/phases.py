#!/usr/bin/env python3
"""Instructions per warm step of `World::step`, by phase, from two callgrind runs.

Usage (the two runs differ only in their step count; their difference is
exactly `long - short` warm steps: set-up and warm-up cancel out):

    bin=$(benches/support/bench-bin scene_bench)
    for s in 3 8; do
      valgrind --tool=callgrind --callgrind-out-file=cg.$s \
        "$bin" --n 20000 --scene uniform --no-parry --steps $s
    done
    python3 benches/support/phases.py cg.3 cg.8 5 CANDIDATES

CANDIDATES is the number of candidate pairs a step (scene_bench with
`--detail candidates` prints it as pairs/step). Prints a Markdown table:
millions of instructions per warm step, and instructions per candidate.
Phases are inclusive costs of functions; what the compiler inlines is
counted in its caller.
"""
import os
import re
import subprocess
import sys

PHASES = {
    'step': r'fmbgrid::world::step::<impl fmbgrid::world::World<_>>::step',
    'pass': r'fmbgrid::pairs::for_each_candidate',
    'closure': r'fmbgrid::world::step::<impl fmbgrid::world::World<_>>::contacts_in::\{\{closure\}\}',
    'intersect': r'fmbgrid::narrow::intersect',
    'box': r'fmbgrid::narrow::(exact_box::(swept_box|static_box)|box_lp::lp_box)',
    'build': r'fmbgrid::grid::(cell_list::CellList<_>::build|hash_grid::HashGrid<_>::build_for_pairs)',
}


def inclusive(path):
    # Run from `/`: from inside the source tree callgrind_annotate prints
    # relative paths and splits a function's costs between entries.
    path = os.path.abspath(path)
    out = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--auto=no', '--threshold=100', path],
                         capture_output=True, text=True, check=True, cwd='/').stdout
    costs = {}
    for line in out.splitlines():
        m = re.match(r'\s*([\d,]+) \([^)]*\)\s+(\S+?):(.*?) \[', line)
        if m:
            name, n = m.group(3), int(m.group(1).replace(',', ''))
            costs[name] = max(costs.get(name, 0), n)
    return costs


def phase(costs, pattern):
    return sum(v for k, v in costs.items() if re.fullmatch(pattern, k))


def main():
    short, long_, steps, candidates = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    a, b = inclusive(short), inclusive(long_)
    v = {k: (phase(b, p) - phase(a, p)) / steps for k, p in PHASES.items()}
    rows = [
        ('grid build (sweep, rounding, cells, sort)', v['build']),
        ('candidate pass (cells, box tests)', v['pass'] - v['closure']),
        ("loading the pairs' frames, filters, contacts", v['closure'] - v['intersect']),
        ('FMB decision and interval', v['intersect'] - v['box']),
        ('exact box (when not inlined into intersect)', v['box']),
        ('check, refresh, events, advance', v['step'] - v['pass'] - v['build']),
        ('whole step', v['step']),
    ]
    print('| phase | M instructions / step | per candidate |')
    print('|---|---|---|')
    for name, x in rows:
        print(f'| {name} | {x / 1e6:.1f} | {x / candidates:,.0f} |')


if __name__ == '__main__':
    main()
