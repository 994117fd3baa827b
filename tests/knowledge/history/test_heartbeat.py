"""The heartbeat of a process's turns: every held lease renewed in one round with the clock passed
in (no sleeping), however long the turn has been silent; a lease lost meanwhile stops its turn."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from knowledge.history import turns
from knowledge.history.heartbeat import LeaseKeeper
from knowledge.history.waiting import poll_until
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db(transaction=True)

WORKER = "this-host:1"  # another host's worker: its lease alone decides whether it lives


class Clock:
    def __init__(self) -> None:
        self.at = timezone.now()

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def test_a_silent_turn_keeps_its_lease_while_its_process_beats():
    clock = Clock()
    keeper = LeaseKeeper(worker=lambda: WORKER, now=clock, every=None)
    a, b = ChatSession.objects.create(), ChatSession.objects.create()
    for s in (a, b):
        assert turns.claim(s.pk, worker=WORKER, now=clock())
        keeper.hold(s.pk, lambda: None)
    # A minute without a single token from the model: each beat pushes the lease on.
    for _ in range(20):
        clock.advance(turns.RENEW_EVERY.total_seconds())
        assert keeper.beat() == set()
    assert turns.is_busy(a.pk, now=clock()) and turns.is_busy(b.pk, now=clock())
    assert turns.is_busy(a.pk, now=clock.at + turns.LEASE - timedelta(seconds=1))
    # The process stops beating (killed, frozen): the lease runs out, the chat is free.
    assert not turns.is_busy(a.pk, now=clock.at + turns.LEASE + timedelta(seconds=1))


def test_a_lease_taken_over_while_the_process_was_frozen_stops_that_turn_only():
    clock = Clock()
    keeper = LeaseKeeper(worker=lambda: WORKER, now=clock, every=None)
    frozen, other = ChatSession.objects.create(), ChatSession.objects.create()
    stopped = {frozen.pk: threading.Event(), other.pk: threading.Event()}
    for s in (frozen, other):
        assert turns.claim(s.pk, worker=WORKER, now=clock())
        keeper.hold(s.pk, stopped[s.pk].set)
    clock.advance(turns.LEASE.total_seconds() + 1)
    # Another worker saw the lease void and gave the turn up; the chat takes a new turn there.
    assert (
        turns.check(frozen.pk, turns.Holder(WORKER, ChatSession.objects.get(pk=frozen.pk).turn_started_at), now=clock())
        == "lost"
    )
    assert turns.claim(frozen.pk, worker="elsewhere:2", now=clock())
    assert keeper.beat() == {frozen.pk}
    assert stopped[frozen.pk].is_set() and not stopped[other.pk].is_set()
    assert keeper.held() == [other.pk]
    assert ChatSession.objects.get(pk=frozen.pk).turn_worker == "elsewhere:2"  # not taken back


def test_the_thread_beats_while_a_turn_is_held_and_dropping_it_ends_the_renewals():
    keeper = LeaseKeeper(worker=lambda: WORKER, every=timedelta(milliseconds=20))
    s = ChatSession.objects.create()
    past = timezone.now() - turns.LEASE  # claimed long ago: only a renewal makes it busy now
    assert turns.claim(s.pk, worker=WORKER, now=past)
    try:
        keeper.hold(s.pk, lambda: None)
        assert poll_until(lambda: turns.is_busy(s.pk), 30, every=0.02)
    finally:
        keeper.drop(s.pk)
        keeper.stop()
    assert keeper.held() == []
