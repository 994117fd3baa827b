"""The benchmarks' processor-time reading of another process (bench/common.py, `cpu_seconds`)
agrees with what that process reads of itself, finer than the kernel's 10 ms ticks: the server
CPU budget divides it by single turns of a few milliseconds."""

from __future__ import annotations

import subprocess
import sys

from bench.common import cpu_seconds

# Works for 30 ms of processor time, then says how much it has used in all and waits.
BUSY = """
import sys, time
start = time.process_time()
while time.process_time() - start < 0.03:
    pass
print(repr(time.process_time()), flush=True)
sys.stdin.readline()
"""


def test_another_processs_cpu_time_is_read_to_well_under_a_tick():
    child = subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        own = float(child.stdout.readline())  # its own reading, taken while it waits
        seen = cpu_seconds(child.pid)
        assert own >= 0.03
        assert abs(seen - own) < 0.002, (seen, own)  # ticks would be off by up to 10 ms
    finally:
        assert child.stdin is not None
        child.stdin.close()  # its readline ends: it exits
        child.wait(timeout=10)
