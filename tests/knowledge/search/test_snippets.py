"""Python-cut snippets highlight exactly what the porter/unicode61 index matched."""

from __future__ import annotations

import pytest

from knowledge.models import ChatSession, Message
from knowledge.search import search_messages
from knowledge.search.snippets import ELLIPSIS, HIGHLIGHT_END, HIGHLIGHT_START, query_stems, stem_snippet


def marked(snippet: str | None) -> list[str]:
    assert snippet is not None
    out, rest = [], snippet
    while HIGHLIGHT_START in rest:
        rest = rest.split(HIGHLIGHT_START, 1)[1]
        word, rest = rest.split(HIGHLIGHT_END, 1)
        out.append(word)
    return out


def test_stemmed_forms_and_case_are_highlighted():
    s = stem_snippet("We Deployed it, then kept deploying; deployment done.", query_stems(["deploying"]))
    # As in the index, porter reduces deployed and deploying to "deploi" but deployment to "deploy".
    assert marked(s) == ["Deployed", "deploying"]


def test_diacritics_fold_like_the_index():
    assert marked(stem_snippet("Lunch at the Café de Flore", query_stems(["cafe"]))) == ["Café"]


def test_no_match_is_none_so_the_caller_falls_back():
    assert stem_snippet("nothing relevant here", query_stems(["kubernetes"])) is None
    assert stem_snippet("anything", frozenset()) is None


def test_long_text_is_cut_around_the_densest_matches_with_ellipses():
    words = [f"w{i}" for i in range(200)]
    words[120] = "nginx"
    words[124] = "nginx"
    s = stem_snippet(" ".join(words), query_stems(["nginx"]), tokens=16)
    assert s is not None and s.startswith(ELLIPSIS) and s.endswith(ELLIPSIS)
    assert marked(s) == ["nginx", "nginx"] and len(s.split()) <= 16


@pytest.mark.django_db
def test_hit_only_in_tool_arguments_still_gets_a_highlighted_snippet():
    session = ChatSession.objects.create(title="tools")
    Message.objects.create(
        session=session,
        role="assistant",
        content="",
        tool_calls=[
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "memory", "arguments": '{"content": "zanzibar trip"}'},
            }
        ],
    )
    page = search_messages("zanzibar")
    assert page.results and HIGHLIGHT_START in page.results[0].snippet
