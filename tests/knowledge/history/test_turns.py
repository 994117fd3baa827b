"""A chat's busy state on its row: one turn at a time across processes, leases that expire,
holders that died are ignored (clocks passed in, no sleeping)."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.history import turns
from knowledge.history.workers import this_worker
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db(transaction=True)


def _dead_worker() -> str:
    """The id a process had that has since exited (its pid is gone from this host)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return f"{this_worker().rpartition(':')[0]}:{proc.pid}"


def test_second_claim_is_refused_until_the_first_turn_releases():
    s = ChatSession.objects.create()
    assert turns.claim(s.pk)
    assert turns.is_busy(s.pk)
    assert not turns.claim(s.pk, worker="other-host:1")
    turns.release(s.pk)
    assert not turns.is_busy(s.pk)
    assert turns.claim(s.pk, worker="other-host:1")


def test_an_expired_lease_frees_the_chat_and_renewal_extends_it():
    s = ChatSession.objects.create()
    start = timezone.now()
    assert turns.claim(s.pk, now=start)
    later = start + turns.LEASE - timedelta(seconds=1)
    turns.renew(s.pk, now=later)
    assert turns.is_busy(s.pk, now=start + turns.LEASE + timedelta(seconds=10))
    assert not turns.is_busy(s.pk, now=later + turns.LEASE + timedelta(seconds=1))


def test_a_turn_held_by_a_dead_process_does_not_block_and_is_freed_at_start_up():
    s = ChatSession.objects.create()
    assert turns.claim(s.pk, worker=_dead_worker())
    assert not turns.is_busy(s.pk)
    assert turns.release_dead() == 1
    assert ChatSession.objects.get(pk=s.pk).turn_worker == ""


def test_only_the_holder_releases():
    s = ChatSession.objects.create()
    assert turns.claim(s.pk, worker="other-host:7")
    turns.release(s.pk)  # this process does not hold it
    assert turns.is_busy(s.pk)


def test_wait_until_free_gives_up_at_the_timeout_with_an_injected_clock():
    s = ChatSession.objects.create()
    assert turns.claim(s.pk)
    ticks = iter(range(100))
    slept: list[float] = []
    assert not turns.wait_until_free(s.pk, 3, clock=lambda: float(next(ticks)), sleep=slept.append)
    assert len(slept) == 2  # checked at t=1 and t=2, gave up at t=3
    turns.release(s.pk)
    assert turns.wait_until_free(s.pk, 3, clock=lambda: 0.0, sleep=slept.append)


def test_claiming_a_deleted_chat_raises():
    with pytest.raises(ChatSession.DoesNotExist):
        turns.claim("no-such-session")


def _holder(session_id: str) -> turns.Holder:
    found = turns.holder(session_id)
    assert found is not None
    return found


def test_a_watched_turn_is_running_until_its_lease_runs_out_then_lost_for_every_watcher():
    s = ChatSession.objects.create()
    start = timezone.now()
    assert turns.claim(s.pk, worker="other-host:3", now=start)
    turn = _holder(s.pk)
    assert turns.check(s.pk, turn, now=start + turns.LEASE - timedelta(seconds=1)) == "running"
    void = start + turns.LEASE + timedelta(seconds=1)
    assert turns.check(s.pk, turn, now=void) == "lost"
    # The first watcher freed the chat; the others, checking after it, still hear "lost".
    assert not turns.is_busy(s.pk, now=void) and turns.holder(s.pk) is None
    assert turns.check(s.pk, turn, now=void) == "lost"
    assert turns.claim(s.pk, worker="other-host:4", now=void)
    assert turns.check(s.pk, turn, now=void) == "ended"  # a newer turn is not the lost one


def test_a_turn_whose_process_died_is_lost_at_once_and_a_finished_one_ended():
    dead = ChatSession.objects.create()
    assert turns.claim(dead.pk, worker=_dead_worker())
    assert turns.check(dead.pk, _holder(dead.pk)) == "lost"
    done = ChatSession.objects.create()
    assert turns.claim(done.pk)
    turn = _holder(done.pk)
    assert turns.check(done.pk, turn) == "running"
    turns.release(done.pk)
    assert turns.check(done.pk, turn) == "ended"


def test_renewing_all_leases_in_one_statement_names_the_ones_no_longer_held():
    start = timezone.now()
    kept, taken = ChatSession.objects.create(), ChatSession.objects.create()
    for s in (kept, taken):
        assert turns.claim(s.pk, worker="this-host:5", now=start)
    ChatSession.objects.filter(pk=taken.pk).update(turn_worker="other-host:6")
    later = start + turns.LEASE
    assert turns.renew_all([kept.pk, taken.pk], worker="this-host:5", now=later) == {taken.pk}
    assert turns.is_busy(kept.pk, now=later + turns.LEASE - timedelta(seconds=1))
    assert turns.renew_all([], worker="this-host:5") == set()
