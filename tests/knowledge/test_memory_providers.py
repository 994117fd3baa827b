"""The record of how each memory provider is doing, as the settings page reads it: each kind of
call keeps its latest outcome, the worst is shown with its error, a turn given is timed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from foundation import config as hermes_config
from knowledge import memory_providers
from knowledge.memory_providers import FAILING, NOT_YET, OK, SLOW, UNAVAILABLE, record, states
from tests.conftest import write_config


@pytest.fixture
def recall_home(home: Path) -> Iterator[Path]:
    memory_providers.forget(home)
    write_config(home, "memory:\n  provider: session_recall\n")
    yield home
    memory_providers.forget(home)


def test_a_provider_not_called_yet_says_so(recall_home):
    (state,) = states()
    assert (state.name, state.state, state.error, state.last_sync) == ("session_recall", NOT_YET, "", None)
    assert "past chats" in state.description


def test_a_failing_sync_is_not_hidden_by_prefetches_that_work(recall_home):
    record("session_recall", "sync_turn", FAILING, error="sync_turn: ConnectionError: refused")
    record("session_recall", "prefetch", OK)
    (state,) = states()
    assert (state.state, state.error) == (FAILING, "sync_turn: ConnectionError: refused")
    assert state.at is not None and state.last_sync is None
    record("session_recall", "sync_turn", OK, synced=True)  # it works again
    (state,) = states()
    assert (state.state, state.error) == (OK, "") and state.last_sync is not None


def test_a_failure_outranks_a_slow_call(recall_home):
    record("session_recall", "prefetch", SLOW, error="prefetch gave no answer within 3 s")
    assert states()[0].state == SLOW
    record("session_recall", "on_session_end", FAILING, error="on_session_end: OSError: disk full")
    assert (states()[0].state, states()[0].error) == (FAILING, "on_session_end: OSError: disk full")


def test_the_record_is_shared_through_the_home_and_a_torn_file_starts_afresh(recall_home):
    record("session_recall", "sync_turn", OK, synced=True)
    assert '"last_sync"' in (recall_home / memory_providers.STATUS_FILE).read_text()
    (recall_home / memory_providers.STATUS_FILE).write_text('{"session_recall": {"calls": ')
    assert states()[0].state == NOT_YET


def test_mem0_where_it_cannot_run_is_unavailable_with_the_reason(recall_home):
    write_config(recall_home, "memory:\n  provider: mem0\n")
    (state,) = states(hermes_config.get())
    assert state.state == UNAVAILABLE
    assert state.error.startswith(("mem0 needs an embedding model", "the mem0ai library is not installed"))
