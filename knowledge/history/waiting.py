"""Waiting on state another process changes (a running turn, a queued review): poll the record
until it says done, within a timeout. The clock and the sleep are passed in, so tests need no
real time."""

from __future__ import annotations

import time
from collections.abc import Callable

POLL_SECONDS = 0.2
Clock = Callable[[], float]
Sleep = Callable[[float], None]


def poll_until(
    done: Callable[[], bool],
    timeout: float,
    *,
    clock: Clock = time.monotonic,
    sleep: Sleep = time.sleep,
    every: float = POLL_SECONDS,
) -> bool:
    """True once `done()` holds; False if `timeout` seconds passed first."""
    deadline = clock() + timeout
    while not done():
        if clock() >= deadline:
            return False
        sleep(every)
    return True
