#!/usr/bin/env python3
"""Instructions per warm step of `World::step`, by phase, from two callgrind runs.

Usage (the two runs differ only in their step count; their difference is
exactly `long - short` warm steps: set-up and warm-up cancel out):

    bin=$(benches/support/bench-bin scene_bench)
    for s in 3 8; do
      valgrind --tool=callgrind --callgrind-out-file=cg.$s \\
        $bin --n 20000 --scene uniform --no-parry --steps $s --threads 1 --detail exact
    done
    python3 benches/support/phases.py cg.3 cg.8 5 CANDIDATES CONTACTS \
      [--csv FILE --scene S --n N --detail D --commit HASH]

CANDIDATES and CONTACTS are the candidate pairs and contacts a step
(scene_bench prints pairs/frame: with `--detail candidates` it counts the
candidates, with `exact` the contacts). Prints a Markdown table: millions
of instructions per warm step, per candidate and per contact; `--csv`
appends the same rows to FILE (`results.rs`'s machine, commit and date
columns first, as the benchmark programs write them; `--commit`: the
commit the binary was built at, when it is not the checkout's HEAD).

Phases are inclusive costs of functions (what the compiler inlines is
counted in its caller; code inlined from another file is told apart by
that file's name, e.g. the simplex box of `box_lp.rs` inside `intersect`).
"""
import csv
import os
import re
import subprocess
import sys

from stamp import commit, machine, today

HEADER = ['machine', 'commit', 'date', 'bench', 'scene', 'n', 'detail', 'phase',
          'minstr_per_step', 'per_candidate', 'per_contact']

# (file, function) patterns of each measured part; a file of None matches
# the function's own entry (all its inlined code included).
PARTS = {
    'total': [(None, r'PROGRAM TOTALS')],
    'build': [(None, r'fmbgrid::grid::cell_list::CellList<_>::build')],
    'update': [(None, r'fmbgrid::world::broad_phase::BroadPhase<_>::update')],
    'kept': [(None, r'fmbgrid::world::kept_pairs::KeptPairs<_>::update')],
    'pass': [(None, r'fmbgrid::pairs::for_each_candidate')],
    'closure': [(None, r'fmbgrid::world::narrow_phase::contacts_in::\{\{closure\}\}')],
    'fmb': [(None, r'fmbgrid::narrow::(intersect|overlap_interval)')],
    'box': [(r'.*/narrow/(box_lp|exact_box)\.rs', r'fmbgrid::narrow::intersect'),
            (None, r'fmbgrid::narrow::(exact_box::(swept_box|static_box)|box_lp::lp_box)')],
    'gap': [(None, r'fmbgrid::narrow::separation::gap_exceeding')],
    'events': [(None, r'fmbgrid::world::narrow_phase::NarrowPhase<_>::update_events')],
}


def inclusive(path):
    # Run from `/`: from inside the source tree callgrind_annotate prints
    # relative paths and splits a function's costs between entries.
    path = os.path.abspath(path)
    out = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--auto=no', '--threshold=100', path],
                         capture_output=True, text=True, check=True, cwd='/').stdout
    costs = {}
    for line in out.splitlines():
        total = re.match(r'\s*([\d,]+) \([^)]*\)\s+PROGRAM TOTALS', line)
        if total:
            costs[('', 'PROGRAM TOTALS')] = int(total.group(1).replace(',', ''))
            continue
        m = re.match(r'\s*([\d,]+) \([^)]*\)\s+(\S+?):(.*?) \[', line) or \
            re.match(r'\s*([\d,]+) \([^)]*\)\s+(\S+?):(.*)$', line)
        if m:
            key, n = (m.group(2), m.group(3).strip()), int(m.group(1).replace(',', ''))
            costs[key] = max(costs.get(key, 0), n)
    return costs


def part(costs, patterns):
    total = 0
    for file_pat, fn_pat in patterns:
        if file_pat is None:
            # The function's own entry: the largest of its file entries.
            total += max((v for (f, fn), v in costs.items() if re.fullmatch(fn_pat, fn)), default=0)
        else:
            total += sum(v for (f, fn), v in costs.items() if re.fullmatch(file_pat, f) and re.fullmatch(fn_pat, fn))
    return total


def main():
    args = sys.argv[1:]
    opts = {}
    for name in ('--csv', '--scene', '--detail', '--n', '--machine', '--commit'):
        if name in args:
            i = args.index(name)
            opts[name] = args[i + 1]
            del args[i:i + 2]
    short, long_, steps, candidates, contacts = args[0], args[1], int(args[2]), float(args[3]), float(args[4])
    a, b = inclusive(short), inclusive(long_)
    v = {k: (part(b, p) - part(a, p)) / steps for k, p in PARTS.items()}
    rows = [
        ('grid build (sweep, rounding, cells, sort)', v['build']),
        ('kept pairs (boxes compared, pairs looked up, candidates listed)', v['kept']),
        ('broad phase upkeep besides the build (near lists, stores)', v['update'] - v['build'] - v['kept']),
        ('candidate pass (cells, box tests; or the kept candidates read)', v['pass'] - v['closure']),
        ("per candidate: frames, filters, coherence look-ups, contacts", v['closure'] - v['fmb'] - v['gap']),
        ('FMB decision and interval', v['fmb'] - v['box']),
        ('exact box', v['box']),
        ('coherence: gaps of the pairs FMB rejects', v['gap']),
        ('body pairs and events', v['events']),
        ('the rest (check, refresh, advance, the harness)',
         v['total'] - v['update'] - v['pass'] - v['events']),
        ('whole step', v['total']),
    ]
    print('| phase | M instructions / step | per candidate | per contact |')
    print('|---|---|---|---|')
    for name, x in rows:
        print(f'| {name} | {x / 1e6:.2f} | {x / candidates:,.0f} | {x / contacts:,.0f} |')
    if '--csv' in opts:
        path = opts['--csv']
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        with open(path, 'a', newline='') as f:
            w = csv.writer(f, lineterminator='\n')
            if new:
                w.writerow(HEADER)
            for name, x in rows:
                w.writerow([opts.get('--machine') or machine(), opts.get('--commit') or commit(), today(),
                            'callgrind_phases', opts.get('--scene', ''), opts.get('--n', ''), opts.get('--detail', ''),
                            name, f'{x / 1e6:.2f}', f'{x / candidates:.0f}', f'{x / contacts:.0f}'])


if __name__ == '__main__':
    main()
