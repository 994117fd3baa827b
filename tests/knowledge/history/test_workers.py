"""Worker ids name a live process on this host; a finished one is recognised as gone."""

from __future__ import annotations

import os

from knowledge.history.workers import is_alive, this_worker
from tests.knowledge.history.test_turns import _dead_worker


def test_this_process_is_alive_and_an_exited_one_is_not():
    assert this_worker().endswith(f":{os.getpid()}")
    assert is_alive(this_worker())
    assert not is_alive(_dead_worker())


def test_another_host_is_trusted_and_garbage_is_not():
    assert is_alive("some-other-machine:1")
    assert not is_alive("nonsense")
    assert not is_alive("")
