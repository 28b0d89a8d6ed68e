"""The `machine,commit,date` columns every results row starts with, as the
benchmark programs write them (`results.rs`), for the Python scripts that
write rows (`phases.py`, `criterion_csv.py`, `python/bench/uniform.py`)."""
import datetime
import os
import pathlib
import subprocess


def machine():
    """`results::machine()`: CPU model and count, lower case, dashes."""
    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    name = f"{model}-{os.cpu_count() or 1}cpu".lower()
    name = "".join(c if c.isascii() and c.isalnum() else "-" for c in name)
    return "-".join(w for w in name.split("-") if w)


def commit():
    """The checkout's HEAD, short, or `unknown`."""
    try:
        return subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=pathlib.Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def today():
    """The UTC date, as the rows write it."""
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()
