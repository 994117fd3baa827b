"""The query sanitiser: whatever a person types becomes quoted literal terms, never FTS syntax."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.search.sanitize import (
    MAX_QUERY_CHARS,
    exclusion_problem,
    parse_groups,
    parse_terms,
    sanitize_query,
    syntax_hint,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("docker compose", '"docker" "compose"'),
        ("docker-compose", '"docker-compose"'),
        ("upgrade to v1.2 now", '"upgrade" "to" "v1.2" "now"'),
        ('"exact phrase" other', '"exact phrase" "other"'),
        ('unbalanced "quote here', '"unbalanced" "quote" "here"'),
        ('"one" "two" "three', '"one" "two" "three"'),
        ("docker AND compose OR NOT swarm NEAR x", '("docker" "compose") OR (("x") NOT ("swarm"))'),  # OR: alternatives
        ("kafka OR 部署", '("kafka") OR ("部署")'),
        ("OR docker OR", '"docker"'),  # OR with nothing on one side: no alternative
        ("50% 增长100%的", '"50" "增长100%的"'),  # % is literal in Chinese text only
        ("AND", '"AND"'),  # only operators: search for the word itself
        ("foo* ^bar (baz) {qux} col:val +plus -minus", '("foo"* "bar" "baz" "qux" "col" "val" "plus") NOT ("minus")'),
        ('deploy -docker -"docker compose"', '("deploy") NOT ("docker" OR "docker compose")'),  # exclusions
        ("python NOT java", '("python") NOT ("java")'),  # FTS5's NOT, as Hermes passes it
        ("部署 -失败", '("部署") NOT ("失败")'),
        ("docker-compose a - b", '"docker-compose" "a" "b"'),  # a - inside a word, or alone, joins or is dropped
        ("deploy*", '("deploy"* OR "deplo"*)'),  # a prefix, also one letter shorter (porter stems it)
        ("部署*", '"部署"'),  # substring search: no prefixes
        ("NEAR(a b, 3)", '"a" "b" "3"'),
        ("部署 服务器", '"部署" "服务器"'),
        ("café", '"café"'),
        ("Docker docker DOCKER", '"Docker"'),
    ],
)
def test_sanitize_examples(text: str, expected: str) -> None:
    assert sanitize_query(text) == expected


@pytest.mark.parametrize("text", ["", "   ", '""', '"', "* ^ ( ) : + - { }", "--", "\x00\x01", '" "'])
def test_nothing_searchable_gives_none(text: str) -> None:
    assert sanitize_query(text) is None


def test_length_is_capped() -> None:
    text = "a" * (MAX_QUERY_CHARS - 1) + " tail"
    terms = parse_terms(text)
    assert [t.text for t in terms] == ["a" * (MAX_QUERY_CHARS - 1)]


def test_phrase_is_marked_as_phrase() -> None:
    terms = parse_terms('"restart nginx" config')
    assert [(t.text, t.phrase) for t in terms] == [("restart nginx", True), ("config", False)]


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE w USING fts5(c, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='trigram')")
    for table in ("w", "t"):
        conn.execute(f"INSERT INTO {table} VALUES ('docker-compose v1.2 部署 \"AND\" NEAR(x) * ^ col:val')")
    return conn


@settings(max_examples=400, deadline=None)
@given(text=st.text(max_size=300))
def test_any_text_is_valid_fts5(fts: sqlite3.Connection, text: str) -> None:
    query = sanitize_query(text)
    if query is None:
        return
    assert len(query) <= 2 * MAX_QUERY_CHARS + 2 * 32 + 32
    for table in ("w", "t"):
        fts.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (query,)).fetchall()


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(
            ['"', "AND", "OR", "NOT", "NEAR", "(", ")", "*", "^", ":", "-", "+", "{", "}", ",", "x", "部署"]
        ),
        max_size=15,
    )
)
def test_operator_soup_is_valid_fts5(fts: sqlite3.Connection, words: list[str]) -> None:
    for text in (" ".join(words), "".join(words)):
        query = sanitize_query(text)
        if query is not None:
            fts.execute("SELECT rowid FROM w WHERE w MATCH ?", (query,)).fetchall()


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("Deb*", "word* finds words that start"),
        ('"deploy*" nginx', "Try fewer words"),  # inside quotes a * is just text
        ("deploy -word", "-word leaves out"),
        ("docker-compose", "Try fewer words"),  # a hyphen inside a word is part of it
        ("kafka AND lag", "Every word must appear already"),
    ],
)
def test_syntax_hint_says_what_the_query_meant(text: str, start: str) -> None:
    assert syntax_hint(text).startswith(start)


@pytest.mark.parametrize("text", ["-docker", "NOT docker", "deploy OR -docker", '-"docker compose"', "-部署 -失败"])
def test_only_exclusions_is_refused_with_a_message(text: str) -> None:
    assert sanitize_query(text) is None
    problem = exclusion_problem(text) or ""
    assert "only leaves words out" in problem and "add a word to find" in problem


def test_exclusions_are_kept_apart_from_the_terms_to_find() -> None:
    assert exclusion_problem("deploy -docker") is None
    assert [t.text for t in parse_terms("deploy -docker NOT k8s")] == ["deploy"]
    groups = parse_groups('-"docker compose" deploy OR 部署 -失败')
    assert [[(t.text, t.exclude) for t in g] for g in groups] == [
        [("deploy", False), ("docker compose", True)],  # what to find first, then what to leave out
        [("部署", False), ("失败", True)],
    ]
