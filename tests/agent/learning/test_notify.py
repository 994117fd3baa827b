"""Review notifications: listeners subscribe, hear every notice, and one failing listener
never stops the others."""

from __future__ import annotations

import logging

import pytest

from agent.learning import notify


def _notice(summary: str = "Memory updated", saved: int = 1) -> notify.ReviewNotice:
    write = notify.SavedWrite(kind="memory", target="memory", action="add", message=summary)
    return notify.ReviewNotice("s1", 7, "memory", summary=summary, status="done", saved=[write] * saved)


def test_subscribed_listeners_hear_each_notice_until_they_unsubscribe():
    heard: list[str] = []
    unsubscribe = notify.subscribe(lambda n: heard.append(n.line))
    try:
        notify.publish(_notice())
    finally:
        unsubscribe()
    notify.publish(_notice("Skill 'x' created"))
    assert heard == ["💾 1 saved"]
    unsubscribe()  # a second call is harmless


def test_a_failing_listener_is_logged_and_the_others_still_hear(caplog: pytest.LogCaptureFixture):
    heard: list[int] = []

    def broken(n: notify.ReviewNotice) -> None:
        raise RuntimeError("tab went away")

    subs = [notify.subscribe(broken), notify.subscribe(lambda n: heard.append(n.review_id))]
    try:
        with caplog.at_level(logging.ERROR, logger="agent.learning.notify"):
            notify.publish(_notice())
    finally:
        for unsubscribe in subs:
            unsubscribe()
    assert heard == [7]
    assert "listener failed" in caplog.text


def test_a_review_that_saved_nothing_has_no_line():
    assert _notice("", saved=0).line == ""
    assert _notice("User profile updated · Skill 'a' created", saved=2).line == "💾 2 saved"


def test_writes_held_for_approval_are_in_the_line_with_or_without_changes():
    def held(n: int) -> list[notify.HeldWrite]:
        return [notify.HeldWrite(kind="memory", target="user", action="add", pending_id=i, hold="") for i in range(n)]

    held_only = notify.ReviewNotice("s1", 7, "memory", summary="", status="done", held=held(1))
    both = notify.ReviewNotice("s1", 7, "memory", "Memory updated", "done", saved=_notice().saved, held=held(2))
    assert held_only.line == "💾 1 waits for you"
    assert both.line == "💾 1 saved · 2 wait for you"
    assert notify.ReviewNotice("s1", 7, "memory", summary="", status="done").line == ""
