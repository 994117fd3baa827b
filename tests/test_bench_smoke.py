"""The benchmarks (bench/, `python -m bench`) run end to end: every benchmark once at tiny
sizes, in parallel, writing a results file with a row per figure. No timing is asserted: on a
shared machine only the full run's side-by-side figures mean anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run import PARTS, main

pytestmark = pytest.mark.slow


def test_every_benchmark_runs_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    main(["--scale", "tiny", "--jobs", str(len(PARTS)), "--out", str(out), "--timeout", "240"])
    text = out.read_text(encoding="utf-8")
    assert "FAILED" not in text, text
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| #")]
    numbers = {row.split("|")[1].strip() for row in rows}
    assert numbers >= {"1", "2", "3", "4", "5", "6", "7", "8"}, numbers
    for needle in ("machine:", "date:", "commit:", "product median", "reference"):
        assert needle in text
