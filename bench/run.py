"""The one entry point: run every benchmark and write bench/RESULTS.md.

    .venv/bin/python -m bench                    # everything, full sizes (< 15 minutes on 2 cores)
    .venv/bin/python -m bench --scale tiny       # every benchmark once at tiny sizes (the smoke test)
    .venv/bin/python -m bench --only overhead search --out /tmp/r.md

Benchmarks (each in its own process, see bench/part.py), numbered as in the README's benchmark table:
 1 overhead        a turn through AgentSession vs the raw openai client, same request
 2+3 live          websocket first token; 20/50/100 sessions at a real model's pace, 20 at a fast one
 4 review_overhead chat turn latency with reviews running (1 and 10 sessions reviewing)
 5 search          FTS vs LIKE at 200k and 1M, the search page through daphne, the admin's search
 6 memory_writes   memory store writes/s, 1 and 4 contending processes
 7 prompt_economy  prompt tokens on memory/skills blocks, system prompt stability, review cost
 8 footprint       start-up time, resident memory idle and after 1M messages (under load: in 3)
 9 threat_scan     the threat scan's worst adversarial input up to 64 KiB beside prose of the same length
10 hostile_uploads a page's load time while 4 hostile PDFs are read, against the idle server
11 skill_corpora   real skill checkouts (SKILL_CORPUS_<NAME>=path) imported whole, beside hostile skills caught
12 first_run       serve.sh on a fresh clone to its login link, and the .venv's size, without and with the test tools
13 recall          a turn beside a backlog being embedded; hybrid search (words and meaning) at 100k and 1M
14 scale_out       two daphne workers against one on PostgreSQL + Redis, every process's CPU on the machine's cores
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from bench.common import ROOT, Figure
from bench.part import MARK

_NOT_PASSED = ("HERMES_HOME", "HERMES_DB", "DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "HERMES_QUEUE")


PARTS = [
    "overhead",
    "live",
    "review_overhead",
    "search",
    "memory_writes",
    "prompt_economy",
    "footprint",
    "threat_scan",
    "hostile_uploads",
    "skill_corpora",
    "first_run",
    "recall",
    "scale_out",
]


def run_part(name: str, scale: str, timeout: float) -> tuple[list[Figure], str]:
    """Run one benchmark process; its failure or time-out becomes a row saying so, not a lost run."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.part", name, scale],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a time-out also ends the daphne it started
        # Every part measures the embedded default in homes of its own (SQLite, in-memory layer);
        # PostgreSQL search has bench/search_postgres.py. A DATABASE_URL here would make the
        # parts share one database and migrate it at once.
        env={k: v for k, v in os.environ.items() if k not in _NOT_PASSED},
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return [Figure("?", f"{name} FAILED", "", notes=f"timed out after {timeout:.0f}s")], f"{name}: timed out"
    took = time.monotonic() - start
    lines = [ln for ln in stdout.splitlines() if ln.startswith(MARK)]
    if proc.returncode != 0 or not lines:
        tail = (stderr or stdout)[-1500:]
        return [Figure("?", f"{name} FAILED", "", notes=tail.replace("\n", " | "))], f"{name}: failed in {took:.0f}s"
    figures = [Figure(**row) for row in json.loads(lines[-1][len(MARK) :])]
    return figures, f"{name}: {len(figures)} figures in {took:.0f}s"


def machine() -> str:
    cpu = "?"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}; "
        f"load average at start {load[0]:.1f}"
    )


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True)
    return out.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def _num(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    return f"{v:,.1f} {unit}".strip() if abs(v) >= 10 or v == 0 else f"{v:.2f} {unit}".strip()


def render(figures: list[Figure], log: list[str], scale: str, took: float) -> str:
    rows = [
        "| # | figure | product median | product p95 | reference | ref. median | ref. p95 | result | goal | met |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        met = {True: "yes", False: "**no**", None: ""}[f.met]
        rows.append(
            f"| {f.bench} | {f.name} | {_num(f.median, f.unit)} | {_num(f.p95, f.unit)} | {f.reference} | "
            f"{_num(f.ref_median, f.unit)} | {_num(f.ref_p95, f.unit)} | {f.result} | {f.goal} | {met} |"
        )
    notes = [f"- **{f.name}**: {f.notes}" for f in figures if f.notes]
    return "\n".join(
        [
            "# Benchmark results",
            "",
            "Written by `python -m bench` (bench/run.py). Both sides of every figure were measured in the same",
            "run, interleaved; on a shared machine only the side-by-side differences and ratios mean much.",
            "",
            f"- machine: {machine()}",
            f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
            f"- commit: {commit()}",
            f"- scale: {scale}; total time {took / 60:.1f} min",
            "",
            *rows,
            "",
            "## Notes",
            "",
            *notes,
            "",
            "## Run log",
            "",
            *[f"- {line}" for line in log],
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", choices=["full", "tiny"], default="full")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=PARTS)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--timeout", type=float, default=600, help="seconds allowed per benchmark")
    parser.add_argument(
        "--jobs", type=int, default=1, help="benchmarks run at once (>1 only for smoke runs: they disturb each other)"
    )
    args = parser.parse_args(argv)
    start = time.monotonic()
    figures: list[Figure] = []
    log: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for got, line in pool.map(lambda name: run_part(name, args.scale, args.timeout), args.only):
            figures.extend(got)
            log.append(line)
            print(line, flush=True)
    text = render(figures, log, args.scale, time.monotonic() - start)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
