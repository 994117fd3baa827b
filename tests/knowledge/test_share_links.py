"""The share-link store: a new link's token is its own and unguessable, `find` answers only for a
live link whose token matches exactly, and a revoke touches only the chat's own live link."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from hermes_site.access import login_token
from knowledge import share_links
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db


def _session(pk: str) -> ChatSession:
    return ChatSession.objects.create(pk=pk, title=pk, system_prompt="")


def test_each_link_has_its_own_token_never_the_login_token(home):
    _session("wallaby")
    tokens = {share_links.create("wallaby", None).token for _ in range(5)}
    assert len(tokens) == 5 and login_token() not in tokens
    assert all(share_links.TOKEN_RE.fullmatch(t) for t in tokens)


def test_find_answers_for_a_live_link_only(home):
    _session("bilby")
    forever, day = share_links.create("bilby", None), share_links.create("bilby", 1)
    assert share_links.find(forever.token) == forever and share_links.find(day.token) == day
    day.expires_at = timezone.now() - timedelta(seconds=1)
    day.save()
    assert share_links.find(day.token) is None
    assert share_links.revoke("bilby", forever.pk)
    assert share_links.find(forever.token) is None
    assert not share_links.revoke("bilby", forever.pk)  # once is enough
    assert share_links.live("bilby") == []


def test_find_wants_the_exact_token(home):
    _session("potoroo")
    link = share_links.create("potoroo", None)
    for near in (link.token.swapcase(), link.token[:-1], link.token + "x", f" {link.token}", "", "../" * 15):
        assert share_links.find(near) is None


def test_a_link_is_revoked_only_through_its_own_chat(home):
    _session("dingo")
    _session("emu")
    link = share_links.create("dingo", 7)
    assert not share_links.revoke("emu", link.pk)
    assert share_links.live("dingo") == [link]
