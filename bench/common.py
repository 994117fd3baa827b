"""What every benchmark shares: the figure a benchmark reports, statistics, interleaving, an
in-process Django on a temporary HERMES_HOME, and the scripted model's paces.

A benchmark measures its product side and its reference side in the same run, interleaved
sample by sample (or round by round), because these machines are shared and noisy: only
ratios and differences measured side by side mean something.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass
class Figure:
    """One row of bench/RESULTS.md."""

    bench: str  # which benchmark (1..8)
    name: str
    unit: str
    median: float | None = None
    p95: float | None = None
    ref_median: float | None = None
    ref_p95: float | None = None
    reference: str = ""  # what the reference side is
    result: str = ""  # the headline (difference, ratio, share…)
    goal: str = ""
    met: bool | None = None
    notes: str = ""
    n: int = 0
    profile: str = ""  # what bounds the figure, when a benchmark can tell

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Samples:
    product: list[float] = field(default_factory=list)
    reference: list[float] = field(default_factory=list)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)] if ordered else float("nan")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def interleaved(product: Callable[[int], float], reference: Callable[[int], float], n: int, warm: int = 3) -> Samples:
    """Run the two sides alternately (the order flipping every sample) `n` times each."""
    for i in range(warm):
        product(-1 - i)
        reference(-1 - i)
    out = Samples()
    for i in range(n):
        pair = ((product, out.product), (reference, out.reference))
        for fn, into in pair if i % 2 == 0 else reversed(pair):
            into.append(fn(i))
    return out


def figure_from(bench: str, name: str, unit: str, s: Samples, **kw: Any) -> Figure:
    return Figure(
        bench,
        name,
        unit,
        median(s.product),
        p95(s.product),
        median(s.reference) if s.reference else None,
        p95(s.reference) if s.reference else None,
        n=len(s.product),
        **kw,
    )


def temp_home(prefix: str = "hermes-bench-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def django_setup(home: Path, config: str = "", env: dict[str, str] | None = None) -> None:
    """Django in this process on a fresh home, migrated (settings as the server uses them)."""
    (home / "config.yaml").write_text(config, encoding="utf-8")
    os.environ.update(HERMES_HOME=str(home), DJANGO_SETTINGS_MODULE="hermes_site.settings", **(env or {}))
    os.environ.pop("HERMES_DB", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from foundation import config as hermes_config

    hermes_config.reset()


QUIET_CONFIG = """\
model:
  max_retries: 0
  timeout: 120
memory:
  nudge_interval: 0
  flush_min_turns: 0
  memory_char_limit: 1000000
skills:
  creation_nudge_interval: 0
"""


def chunked_text(chunks: int, size: int = 4) -> str:
    """A reply the scripted server streams in exactly `chunks` content chunks (4 characters each)."""
    word = "abc "
    return (word * chunks)[: chunks * size]


def cpu_seconds(pid: int) -> float:
    """Processor time of a process, all its threads (ended ones too), to the nanosecond: its
    CPU-time clock (the id `clock_getcpuclockid` gives: the pid's complement shifted, the
    scheduler clock). /proc/<pid>/stat counts in ticks of 10 ms, more than a whole turn costs,
    so a figure per turn read from it was mostly rounding; it remains where the clock is refused."""
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except OSError:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory in MB. VmRSS counts the database file's memory-mapped pages (shared page
    cache, once per connection mapping it); RssAnon is the process's own memory."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def chunks(seq: list[Any], n: int) -> Iterator[list[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]
