"""Titles matched as text, with the quotes a model puts around a recalled title stripped."""

from __future__ import annotations

import pytest

from knowledge.models import ChatSession
from knowledge.search.titles import matching_sessions, unquote


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"fingerprint-login"', "fingerprint-login"),
        ("'deploy notes'", "deploy notes"),
        ("“部署问题”", "部署问题"),
        ('`"nested"`', "nested"),
        ('"unbalanced', '"unbalanced'),
        ('say "this" and "that"', 'say "this" and "that"'),  # quotes inside are the query's own
    ],
)
def test_unquote_strips_only_quotes_around_everything(query: str, expected: str) -> None:
    assert unquote(query) == expected


@pytest.mark.django_db
def test_every_term_of_an_alternative_is_in_the_title_newest_first() -> None:
    older = ChatSession.objects.create(title="Login with fingerprint")
    newer = ChatSession.objects.create(title="fingerprint-login")
    ChatSession.objects.create(title="fingerprint only")
    ChatSession.objects.filter(id=older.id).update(updated_at=newer.updated_at.replace(year=2020))
    assert [s.session_id for s in matching_sessions("fingerprint login", limit=5)] == [newer.id, older.id]
    assert matching_sessions("   ", limit=5) == []
    assert [s.session_id for s in matching_sessions("LOGIN", limit=1)] == [newer.id]
