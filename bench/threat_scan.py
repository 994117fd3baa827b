"""9. Threat scan worst case: adversarial inputs up to 64 KiB against plain prose of the same length.

    .venv/bin/python -m bench.threat_scan            # the table, full sizes
    .venv/bin/python -m bench.threat_scan tiny       # a quick look

Every memory write, skill write, import and recalled snippet goes through the scan, and sync
views share one thread, so its worst case on a hostile input is a denial of service. The inputs
here are the ones a backtracking engine suffers from: each pattern's key word repeated, the
prefix of each hand-written hazard (tags, comments, separators, encodings) repeated, nested
tags, and disguises (confusables, combining marks, hidden characters) spread over the text.
Each is timed beside prose of the same length, interleaved, in CPU time of the scanning thread;
the cache is bypassed (every timed text is new) because a first write is what an attacker controls.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Iterator
from typing import Any

from bench.common import ROOT, Figure, interleaved, median, p95

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCALES: dict[str, dict[str, Any]] = {
    "full": {"sizes": [300, 4096, 65536], "n": 5},
    "tiny": {"sizes": [300, 4096], "n": 1},
}
GOALS_MS = {300: 2.0, 65536: 50.0}

_PROSE = (
    "The build failed again on Tuesday because the cache folder filled the disk; we moved it to the "
    "larger volume, kept the logs for a week and asked the team to review the retry settings. "
)

# Hazards written out by hand: what a regex engine backtracks on, and what the folding reads.
HAZARDS: dict[str, str] = {
    "tag <p": "<p",
    "tag <p with space": "<p ",
    "tag <div style": "<div style='",
    "nested tags": "<div><span><p><section>",
    "html comment": "<!--",
    "html comment + word": "<!-- note ",
    "bracket [system": "[system ",
    "fake notice": "system update: ",
    "curl": "curl ",
    "cat": "cat ",
    "echo": "echo ",
    "translate": "translate ",
    "send": "send the data ",
    "ignore": "ignore ",
    "ignore previous": "ignore previous ",
    "spread letters": "a ",
    "dot separators": "a.",
    "underscore separators": "i_",
    "mixed separators": "a-b/c+d~e*f_",
    "percent": "%41",
    "hex escapes": "\\x41",
    "hex digits": "4142",
    "base64 letters": "QUJD",
    "digits as letters": "1gn0r3 ",
    "cyrillic confusables": "іgnоrе ",
    "combining marks": "e\u0301",
    "zero-width": "a\u200b",
    "cjk": "忽略之前",
    "secret-ish": "token=",
}


def _fill(unit: str, size: int) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


def adversarial_inputs(size: int) -> Iterator[tuple[str, str]]:
    """(family name, text of `size` characters): the hazards, then every pattern's key words."""
    from knowledge.verification.threat_scan import COMPACT_PIECES, PIECES

    for name, unit in HAZARDS.items():
        yield name, _fill(unit, size)
    seen: set[str] = set()
    for piece in (*PIECES, *COMPACT_PIECES):
        for needle in sorted(piece.needles or ()):
            if needle not in seen:
                seen.add(needle)
                yield f"key word {needle!r} ({piece.id})", _fill(needle + " ", size)


def plain_text(size: int) -> str:
    return _fill(_PROSE, size)


def _timed(text: str) -> float:
    from knowledge.verification import threat_scan

    # CPU time of this thread: on a machine shared by many processes the wall clock mostly
    # measures waiting for a core; the scan's cost is the CPU it takes.
    started = time.thread_time()
    threat_scan.scan_all(text)
    elapsed = (time.thread_time() - started) * 1000
    threat_scan.forget_cached()  # the next sample is a first scan again
    return elapsed


def _sample(text: str, _i: int) -> float:
    return _timed(text)


def _worst(size: int) -> tuple[str, float]:
    worst_name, worst_ms = "", 0.0
    for name, text in adversarial_inputs(size):
        ms = _timed(text)
        if ms > worst_ms:
            worst_name, worst_ms = name, ms
    return worst_name, worst_ms


def run(scale: str) -> list[Figure]:
    cfg = SCALES[scale]
    figures = []
    for size in cfg["sizes"]:
        name, _ = _worst(size)  # find the slowest family once, then time it beside prose
        hostile = dict(adversarial_inputs(size))[name]
        prose = plain_text(size)
        samples = interleaved(functools.partial(_sample, hostile), functools.partial(_sample, prose), cfg["n"], warm=1)
        worst, plain = median(samples.product), median(samples.reference)
        goal = GOALS_MS.get(size)
        figures.append(
            Figure(
                "9",
                f"threat scan, worst adversarial input at {size:,} chars",
                "CPU ms",
                median=worst,
                p95=p95(samples.product),
                ref_median=plain,
                ref_p95=p95(samples.reference),
                reference=f"plain prose, {size:,} chars",
                result=f"{worst / plain:.1f}x plain; slowest family: {name}",
                goal=f"<= {goal:g} ms" if goal else "",
                met=(worst <= goal) if goal else None,
                n=len(samples.product),
                notes="CPU time of the scanning thread; cache bypassed",
            )
        )
    return figures


def main() -> None:
    scale = sys.argv[1] if len(sys.argv) > 1 else "full"
    for fig in run(scale):
        print(
            f"{fig.name}: {fig.median:.2f} ms (p95 {fig.p95:.2f}) vs {fig.reference} {fig.ref_median:.2f} ms"
            f" -> {fig.result}; goal {fig.goal or '-'} met={fig.met}"
        )


if __name__ == "__main__":
    main()
