"""Start-up of `archcurator verify FILE --json` next to `python -c pass`, hyperfine-style.

    python bench/bench_startup.py [--runs 20] [--file assets/architectures/resnet18.json]

Runs the two commands in turn, `runs` times each (interleaved, after two warm-up runs), and prints for each
the median and the minimum of its wall time and of its CPU time (user + system, from the child's resource
usage, which a busy machine inflates less), and the ratio of the medians (goal <= 2x). Then the modules the
verify command imports, by `python -X importtime`, largest first.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# as installed: pip compiles the bytecode at install time, so the children may write and read __pycache__
# (PYTHONDONTWRITEBYTECODE, set on some build machines, would make every start compile every module)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list) -> tuple[float, float]:
    t = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=ROOT, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _import_times(cmd: list) -> list[tuple[int, str]]:
    """(self microseconds, module) of each import `cmd` makes, from its -X importtime report."""
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=ENV)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line[len("import time:"):].split("|")
        rows.append((int(self_us), name.strip()))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_startup", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--file", default=str(ROOT / "assets" / "architectures" / "resnet18.json"))
    ap.add_argument("--top", type=int, default=15, help="largest imports to list")
    args = ap.parse_args(argv)
    commands = {"python -c pass": [sys.executable, "-c", "pass"],
                "archcurator verify --json": [sys.executable, "-m", "archcurator", "verify", args.file, "--json"]}
    for cmd in commands.values():
        for _ in range(2):
            timed(cmd)
    wall = {k: [] for k in commands}
    cpu = {k: [] for k in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            w, c = timed(cmd)
            wall[name].append(w)
            cpu[name].append(c)
    for name in commands:
        print(f"{name:<28} wall median {statistics.median(wall[name]) * 1e3:6.1f} ms (min "
              f"{min(wall[name]) * 1e3:6.1f})   cpu median {statistics.median(cpu[name]) * 1e3:6.1f} ms "
              f"(min {min(cpu[name]) * 1e3:6.1f})")
    base, ours = commands
    rw = statistics.median(wall[ours]) / statistics.median(wall[base])
    rc = statistics.median(cpu[ours]) / statistics.median(cpu[base])
    ratios = sorted(a / b for a, b in zip(wall[ours], wall[base]))
    print(f"verify --json / python -c pass: wall {rw:.2f}x (per-run {ratios[len(ratios) // 10]:.2f}-"
          f"{ratios[(9 * len(ratios)) // 10]:.2f}), cpu {rc:.2f}x (goal <= 2x)")
    # the imports `python -c pass` makes too (site, the editable install's finder) are the baseline's: listed
    # apart, so the table shows what the command itself adds
    base = {name for _, name in _import_times([sys.executable, "-X", "importtime", "-c", "pass"])}
    rows = _import_times([sys.executable, "-X", "importtime", "-m", "archcurator", "verify", args.file, "--json"])
    own = [(s, name) for s, name in rows if name not in base]
    print(f"imports: {sum(s for s, _ in rows) / 1e3:.1f} ms in all (self times, -X importtime inflates them), "
          f"{sum(s for s, _ in own) / 1e3:.1f} ms in the {len(own)} modules `python -c pass` does not import; "
          "the largest of those:")
    for s, name in sorted(own, reverse=True)[:args.top]:
        print(f"  {s / 1e3:6.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
