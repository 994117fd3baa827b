"""Review notifications: listeners subscribe, hear every notice, and one failing listener
never stops the others."""

from __future__ import annotations

import logging

import pytest

from agent.learning import notify


def _notice(summary: str = "Memory updated") -> notify.ReviewNotice:
    return notify.ReviewNotice(session_id="s1", review_id=7, prompt_kind="memory", summary=summary, status="done")


def test_subscribed_listeners_hear_each_notice_until_they_unsubscribe():
    heard: list[str] = []
    unsubscribe = notify.subscribe(lambda n: heard.append(n.line))
    try:
        notify.publish(_notice())
    finally:
        unsubscribe()
    notify.publish(_notice("Skill 'x' created"))
    assert heard == ["💾 Memory updated"]
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
    assert _notice("").line == ""
    assert _notice("User profile updated · Skill 'a' created").line == "💾 User profile updated · Skill 'a' created"


def test_writes_held_for_approval_are_in_the_line_with_or_without_changes():
    held_only = notify.ReviewNotice("s1", 7, "memory", summary="", status="done", waiting=1)
    both = notify.ReviewNotice("s1", 7, "memory", summary="Memory updated", status="done", waiting=2)
    assert held_only.line == "💾 1 waiting for approval"
    assert both.line == "💾 Memory updated · 2 waiting for approval"
    assert notify.ReviewNotice("s1", 7, "memory", summary="", status="done").line == ""
