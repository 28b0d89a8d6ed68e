#!/usr/bin/env python3
"""The criterion benches' results as rows of benches/results/, like the
benchmark programs' (machine, commit, date first).

Criterion keeps each benchmark's last run in TARGET/criterion/<dir>/new/
(`benchmark.json`: its id; `estimates.json`: point estimates in ns). This
appends one row per benchmark found there (optionally only those whose id
contains FILTER), with the median and mean time per iteration and, when
the benchmark declared a throughput of elements, the time per element:

    cargo bench --bench world -- set_pose
    python3 benches/support/criterion_csv.py target/criterion --csv \\
        benches/results/<machine>/criterion.csv [--filter set_pose]

The machine's name is the benchmark programs' (`results.rs`: the CPU model
and count); the commit is the checkout's HEAD (run it on the commit that
was measured).
"""
import csv
import json
import pathlib
import sys

from stamp import commit, machine, today

HEADER = ["machine", "commit", "date", "bench", "id", "group", "function", "parameter",
          "median_ns", "mean_ns", "elements", "median_ns_per_element"]


def rows(root, only):
    """One row per benchmark under `root` (a criterion output folder)."""
    found = []
    for bench in sorted(pathlib.Path(root).glob("**/new/benchmark.json")):
        meta = json.loads(bench.read_text())
        estimates = json.loads((bench.parent / "estimates.json").read_text())
        full = meta["full_id"]
        if only and only not in full:
            continue
        median, mean = estimates["median"]["point_estimate"], estimates["mean"]["point_estimate"]
        elements = (meta.get("throughput") or {}).get("Elements")
        per = f"{median / elements:.3f}" if elements else ""
        found.append(["criterion", full, meta["group_id"], meta.get("function_id") or "", meta.get("value_str") or "",
                      f"{median:.1f}", f"{mean:.1f}", str(elements or ""), per])
    return found


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip())
        return 2
    root, opts = argv[0], dict(zip(argv[1::2], argv[2::2]))
    if "--csv" not in opts:
        print("--csv FILE is required", file=sys.stderr)
        return 2
    found = rows(root, opts.get("--filter"))
    if not found:
        print(f"{root}: no criterion results" + (f" matching {opts['--filter']!r}" if "--filter" in opts else ""),
              file=sys.stderr)
        return 1
    path = pathlib.Path(opts["--csv"])
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    stamp = [machine(), commit(), today()]
    with open(path, "a", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        if new:
            w.writerow(HEADER)
        for r in found:
            w.writerow(stamp + r)
    print(f"[{len(found)} criterion results appended to {path}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
