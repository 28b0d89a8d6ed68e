#!/usr/bin/env python3
"""BENCHMARKS.md's tables, generated from the rows in benches/results/.

Each table of BENCHMARKS.md sits between two markers:

    <!-- table: MACHINE/FILE.csv commit=HASH [column=value ...] -->
    | generated |
    <!-- end table -->

and is made of the CSV rows of that file whose `commit` (and any other
named column) match, in file order, their fields copied as written (never
re-rounded). The layout per program is below (LAYOUTS).

    python3 benches/support/tables.py            rewrite BENCHMARKS.md's tables
    python3 benches/support/tables.py --check    exit 1 if a table differs from
                                                 its rows, cites no row, or a
                                                 table of BENCHMARKS.md has no
                                                 marker; every results file's
                                                 rows well formed
    python3 benches/support/tables.py --rows FILE BENCH MIN [column=value ...]
                                                 FILE's rows well formed, at
                                                 least MIN of them of program
                                                 BENCH, each with the values
                                                 given (the CI's check of what
                                                 a benchmark program wrote)
"""
import csv
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benches" / "results"
DOC = ROOT / "BENCHMARKS.md"
MARKER = re.compile(r"^<!-- table: (\S+) (.*?)-->$")
END = "<!-- end table -->"

# Per program (the `bench` column): the table's columns as (heading, CSV
# column), one table row per CSV row; or a pivot (qualify): one table row
# per key, one column per (method, field).
LAYOUTS = {
    "scene_bench": [
        ("scene", "scene"), ("N", "n"), ("frames", "frames"), ("threads", "threads"),
        ("engine", "engine"), ("mode", "mode"), ("median ms", "median_ms"),
        ("pairs/frame", "pairs_per_frame"), ("/ best parry", "ratio_to_parry"),
    ],
    "mesh_bench": [
        ("scene", "scene"), ("frames", "frames"), ("threads", "threads"), ("engine", "engine"),
        ("mode", "mode"), ("median ms", "median_ms"), ("pairs/frame", "pairs_per_frame"),
        ("/ parry", "ratio_to_parry"),
    ],
    "load_bench": [
        ("file", "file"), ("triangles", "triangles"), ("bytes", "bytes"), ("runs", "runs"),
        ("load ms (median)", "load_ms"), ("frames ms", "frames_ms"),
    ],
    "tolerance_bench": [
        ("gap (share of size)", "gap"), ("δ (share of size)", "delta"), ("pairs within δ", "pairs"),
        ("fmbgrid ms", "fmbgrid_ms"), ("parry ms", "parry_ms"), ("fmbgrid/parry", "ratio_to_parry"),
        ("same pairs", "same_pairs"), ("Σ distances differ by", "distance_sum_diff"),
    ],
    "scale_out": [
        ("N", "n"), ("ranks", "ranks"), ("frames per rank", "frames_per_rank"), ("ghost frames", "ghost_frames"),
        ("ghost fraction", "ghost_fraction"), ("most received by a rank / its frames", "most_received_share"),
        ("ghost MB per step (all ranks)", "ghost_mb_per_step"), ("MB per rank", "mb_per_rank"),
    ],
    "box_bench": [
        ("mode", "mode"), ("class", "class"), ("pairs", "pairs"), ("seed", "seed"), ("ns/pair", "ns_per_pair"),
        ("fast path", "fast_path_share"), ("max rel. diff", "max_rel_diff"), ("asymmetric", "asymmetric"),
    ],
    "criterion": [
        ("benchmark", "id"), ("median ns", "median_ns"), ("mean ns", "mean_ns"), ("elements", "elements"),
        ("median ns per element", "median_ns_per_element"),
    ],
    "callgrind_phases": [
        ("phase", "phase"), ("M instructions / step", "minstr_per_step"), ("per candidate", "per_candidate"),
        ("per contact", "per_contact"),
    ],
    "qualify": {
        "key": [("case", "case"), ("set", "set"), ("class", "class"), ("pairs", "pairs"),
                ("intersecting", "intersecting")],
        "by": "method",
        "columns": [
            ("FMB overlaps ns", "overlaps", "ns_per_pair"),
            ("FMB intersect ns", "intersect", "ns_per_pair"),
            ("SAT ns", "sat", "ns_per_pair"),
            ("parry ns", "*parry", "ns_per_pair"),
            ("overlaps / parry", "overlaps", "ratio_to_parry"),
            ("intersect / parry", "intersect", "ratio_to_parry"),
            ("SAT / parry", "sat", "ratio_to_parry"),
        ],
    },
}


def read(path):
    """The rows of a results file as dicts, after checking their shape."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty")
    header, body = rows[0], rows[1:]
    if header[:3] != ["machine", "commit", "date"]:
        raise ValueError(f"{path}: header must start with machine,commit,date: {header}")
    out = []
    for i, r in enumerate(body, start=2):
        if len(r) != len(header):
            raise ValueError(f"{path}:{i}: {len(r)} fields, header has {len(header)}")
        d = dict(zip(header, r))
        if RESULTS in path.resolve().parents and d["machine"] != path.parent.name:
            raise ValueError(f"{path}:{i}: machine {d['machine']} in folder {path.parent.name}")
        if not re.fullmatch(r"[0-9a-f]{7,40}|unknown", d["commit"]):
            raise ValueError(f"{path}:{i}: commit {d['commit']!r}")
        if not re.fullmatch(r"\d{4}-\d\d-\d\d", d["date"]):
            raise ValueError(f"{path}:{i}: date {d['date']!r}")
        for column, value in d.items():
            if value and re.search(r"(_ms|_pair|^ratio.*|^n|^pairs|^frames|^threads)$", column):
                try:
                    float(value)
                except ValueError:
                    raise ValueError(f"{path}:{i}: {column} = {value!r} is not a number") from None
        out.append(d)
    return out


def markdown(headings, lines):
    """A Markdown table; an empty field (not recorded) shows as –."""
    text = ["| " + " | ".join(headings) + " |", "|" + "---|" * len(headings)]
    text += ["| " + " | ".join(c or "–" for c in cells) + " |" for cells in lines]
    return text


def table(spec):
    """The generated lines of the table a marker names."""
    m = MARKER.match(spec)
    path = RESULTS / m.group(1)
    filters = dict(f.split("=", 1) for f in m.group(2).split())
    if "commit" not in filters:
        raise ValueError(f"{spec}: names no commit")
    rows = [r for r in read(path) if all(r.get(k) == v for k, v in filters.items())]
    if not rows:
        raise ValueError(f"{spec}: no row of {path.relative_to(ROOT)} matches")
    benches = {r.get("bench") for r in rows}
    if len(benches) != 1:
        raise ValueError(f"{spec}: rows of several programs {benches}: name bench=")
    layout = LAYOUTS[benches.pop()]
    if isinstance(layout, list):
        return markdown([h for h, _ in layout], [[r[c] for _, c in layout] for r in rows])
    keys, groups = [], {}
    for r in rows:
        key = tuple(r[c] for _, c in layout["key"])
        if key not in groups:
            keys.append(key)
            groups[key] = {}
        groups[key][r[layout["by"]]] = r
    lines = []
    for key in keys:
        cells = list(key)
        for _, method, field in layout["columns"]:
            if method.startswith("*"):
                row = next((r for r in groups[key].values() if r.get("engine") == method[1:]), None)
            else:
                row = groups[key].get(method)
            cells.append(row[field] if row and row[field] else "–")
        lines.append(cells)
    return markdown([h for h, _ in layout["key"]] + [h for h, _, _ in layout["columns"]], lines)


def generate(text):
    """BENCHMARKS.md with each marked table regenerated; the count of
    tables, and the tables outside any marker."""
    out, lines, i, count, loose = [], text.split("\n"), 0, 0, []
    while i < len(lines):
        line = lines[i]
        if MARKER.match(line):
            out.append(line)
            out += table(line)
            count += 1
            i += 1
            while i < len(lines) and lines[i] != END:
                i += 1
            if i == len(lines):
                raise ValueError(f"{line}: no {END}")
            out.append(END)
        else:
            if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
                loose.append(f"BENCHMARKS.md:{i + 1}: {line[:60]}")
            out.append(line)
        i += 1
    return "\n".join(out), count, loose


def main(argv):
    if argv[:1] == ["--rows"]:
        path, bench, least = pathlib.Path(argv[1]), argv[2], int(argv[3])
        rows = [r for r in read(path) if r.get("bench") == bench]
        if len(rows) < least:
            print(f"{path}: {len(rows)} rows of {bench}, expected at least {least}")
            return 1
        for want in argv[4:]:
            column, value = want.split("=", 1)
            wrong = [r.get(column) for r in rows if r.get(column) != value]
            if wrong:
                print(f"{path}: {column} is {wrong[0]!r} in a row, expected {value!r}")
                return 1
        print(f"{path}: {len(rows)} rows of {bench}, well formed")
        return 0
    for path in sorted(RESULTS.glob("*/*.csv")):
        read(path)
    text = DOC.read_text()
    new, count, loose = generate(text)
    if argv[:1] == ["--check"]:
        bad = loose[:]
        if new != text:
            bad.append("BENCHMARKS.md: a table differs from its rows: run python3 benches/support/tables.py")
        for b in bad:
            print(b)
        print(f"{count} tables checked against benches/results/, {len(bad)} problems")
        return 1 if bad else 0
    DOC.write_text(new)
    print(f"{count} tables written; tables without a marker: {len(loose)}")
    for b in loose:
        print(b)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"tables.py: {e}")
