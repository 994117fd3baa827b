"""Which server process holds a piece of work (a chat turn, a review), and whether it still lives.

Busy turns and running reviews are records in the database, so every server process sharing
it sees them. Each record names its worker as `host:pid`; a record left behind by a process
that died (a crash, a kill -9) is recognised because that pid is gone from this host. Work held
by another host is trusted until its lease runs out.
"""

from __future__ import annotations

import os
import socket

# The holder of work waiting on the durable queue: no process has it yet.
IN_QUEUE = "queue"


def this_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def is_alive(worker: str) -> bool:
    host, _, pid = worker.rpartition(":")
    if not host or not pid.isdigit():
        return False
    if host != socket.gethostname():
        return True  # another machine: its lease decides
    try:
        os.kill(int(pid), 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True
