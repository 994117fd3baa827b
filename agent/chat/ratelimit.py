"""Per-connection rate limits for the chat websocket (docs/BEHAVIOUR.md, The chat).

A token bucket per open socket: a burst of `capacity` frames, then one more every
`1 / refill_per_second` seconds. A person typing never meets it (turns run one at a time and
take seconds); a runaway script or a page that floods the socket does, and gets a clear
"Slow down: …" error frame for each refused frame. A refused message is not stored and not
sent to the model, and the socket stays open, so the client can resend it after `retry_after`.

The numbers are module constants so a deployment (or a test) can change them in one place;
the consumer reads them when a socket connects.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

# "message" frames start model turns (cost, disk): a burst of 20, then one every 2 s (30/min).
MESSAGE_BURST = 20
MESSAGE_REFILL_PER_SECOND = 0.5
# Every frame (pings, stops, junk): generous, only there so a flood cannot keep the loop busy.
FRAME_BURST = 120
FRAME_REFILL_PER_SECOND = 20.0
# A frame is refused before JSON parsing when it is larger than this many times the message
# limit (JSON can escape one character as six: \\uXXXX) plus room for the envelope.
FRAME_ESCAPE_FACTOR = 6
FRAME_ENVELOPE_CHARS = 1024


class TokenBucket:
    def __init__(self, capacity: int, refill_per_second: float, clock: Callable[[], float] = time.monotonic) -> None:
        if capacity < 1 or refill_per_second <= 0:
            raise ValueError("a token bucket needs capacity >= 1 and a positive refill rate")
        self.capacity = capacity
        self.refill_per_second = refill_per_second
        self._clock = clock
        self._tokens = float(capacity)
        self._stamp = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.refill_per_second)
        self._stamp = now

    def take(self) -> float:
        """Spend one token: 0.0 when allowed, else the seconds until one will be available."""
        self._refill()
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self.refill_per_second


def max_frame_chars(max_message_chars: int) -> int:
    return max_message_chars * FRAME_ESCAPE_FACTOR + FRAME_ENVELOPE_CHARS


def slow_down_message(wait: float, what: str, burst: int, refill_per_second: float) -> str:
    every = 1.0 / refill_per_second
    return (
        f"Slow down: at most {burst} {what} at once, then one every {every:g} s. "
        f"Try again in {wait:g} s; this one was not sent."
    )


def _round_up(wait: float) -> float:
    return math.ceil(wait * 100) / 100


class ConnectionLimits:
    """The two buckets of one socket."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.frames = TokenBucket(FRAME_BURST, FRAME_REFILL_PER_SECOND, clock)
        self.messages = TokenBucket(MESSAGE_BURST, MESSAGE_REFILL_PER_SECOND, clock)

    def check_frame(self) -> tuple[float, str]:
        """(seconds to wait, rounded up so a client that waits exactly that long gets in; message)."""
        wait = _round_up(self.frames.take())
        return wait, (slow_down_message(wait, "frames", FRAME_BURST, FRAME_REFILL_PER_SECOND) if wait else "")

    def check_message(self) -> tuple[float, str]:
        wait = _round_up(self.messages.take())
        return wait, (slow_down_message(wait, "messages", MESSAGE_BURST, MESSAGE_REFILL_PER_SECOND) if wait else "")
