"""Live learning toasts: a toast waits for its turn's delivery (TurnGate), where it links,
and what the page receives through the channel layer."""

from __future__ import annotations

import asyncio
import logging

import pytest
from channels.layers import get_channel_layer

from agent.chat import live
from agent.learning import notify


def _notice(session_id: str = "s1", changes: list[str] | None = None, status: str = "done") -> notify.ReviewNotice:
    """A notice of saved writes, each given as "<kind>:<target>:<action>" ("skill:deploy:create")."""
    writes = [c.split(":") for c in changes or []]
    return notify.ReviewNotice(
        session_id=session_id,
        review_id=42,
        prompt_kind="combined",
        summary="what the tools said",
        status=status,
        saved=[notify.SavedWrite(kind=k, target=t, action=a, message="") for k, t, a in writes],
    )


async def _settle() -> None:
    for _ in range(20):  # let every ready task run as far as it can
        await asyncio.sleep(0)


async def test_a_toast_waits_until_its_turn_has_been_delivered():
    gate = live.TurnGate()
    gate.begin("s1")
    waiter = asyncio.create_task(gate.wait("s1"))
    await _settle()
    assert not waiter.done()
    gate.delivered("s1")
    await asyncio.wait_for(waiter, 5)


async def test_no_turn_in_flight_means_no_wait_and_other_sessions_are_not_held():
    gate = live.TurnGate()
    gate.begin("busy")
    await asyncio.wait_for(gate.wait("idle"), 5)
    gate.delivered("never-begun")  # harmless


async def test_a_turn_that_never_reports_delivery_releases_its_toast_after_the_timeout(caplog):
    gate = live.TurnGate()
    gate.begin("stuck")
    with caplog.at_level(logging.WARNING, logger="agent.chat.live"):
        await gate.wait("stuck", timeout=0.01)
    assert "not delivered" in caplog.text


@pytest.mark.parametrize(
    ("changes", "status", "href"),
    [
        (["memory:memory:add", "memory:user:add"], "done", "/memory/"),
        (["skill:docker-debug:create"], "done", "/skills/docker-debug/"),
        (["skill:a:create", "skill:b:create"], "done", "/changes/?review=42"),
        (["skill:a:delete"], "done", "/changes/?review=42"),
        (["memory:memory:add", "skill:a:create"], "done", "/changes/?review=42"),
        ([], "failed", "/reviews/"),
        ([], "done", "/changes/?review=42"),
    ],
)
def test_the_toast_links_to_what_the_review_changed(changes, status, href):
    assert live.notice_href(_notice(changes=changes, status=status)) == href


def test_payload_carries_everything_the_page_shows():
    payload = live.notice_payload(_notice(changes=["skill:git-bisect:create"]))
    assert payload == {
        "session_id": "s1",
        "review_id": 42,
        "kind": "combined",
        "line": "💾 1 saved",
        "parts": [{"text": "1 saved", "href": "/skills/git-bisect/", "title": "what the tools said"}],
        "summary": "what the tools said",
        "status": "done",
        "error": "",
        "href": "/skills/git-bisect/",
        "saved": 1,
        "held": 0,
        "requested": False,
    }


async def test_a_notice_from_the_review_thread_reaches_the_group_after_the_turn_is_delivered():
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(live.GROUP, channel)
    live.capture_loop(asyncio.get_running_loop())
    live.gate.begin("s-live")
    try:
        notice = _notice("s-live", ["memory:memory:add"])
        await asyncio.get_running_loop().run_in_executor(None, notify.publish, notice)
        await _settle()
        with pytest.raises(TimeoutError):  # held by the gate, not by time: the turn is still in flight
            await asyncio.wait_for(layer.receive(channel), 0.05)
        live.gate.delivered("s-live")
        message = await asyncio.wait_for(layer.receive(channel), 5)
    finally:
        live.gate.delivered("s-live")
        await layer.group_discard(live.GROUP, channel)
    assert message["type"] == live.REVIEW == "review"  # the page's frame type, too
    assert message["line"] == "💾 1 saved" and message["href"] == "/memory/"


def test_a_toast_for_held_writes_only_links_to_the_inbox():
    waiting = [notify.HeldWrite(kind="memory", target="user", action="add", pending_id=3, hold="unsupported")]
    held = notify.ReviewNotice("s1", 42, "memory", summary="", status="done", held=waiting)
    assert live.notice_href(held) == "/pending/?review=42"
    changed_and_held = notify.ReviewNotice(
        "s1",
        42,
        "memory",
        "User profile updated",
        "done",
        saved=_notice(changes=["memory:user:add"]).saved,
        held=waiting,
    )
    assert live.notice_href(changed_and_held) == "/memory/"
    assert [p["href"] for p in live.notice_parts(changed_and_held)] == ["/memory/", "/pending/?review=42"]
