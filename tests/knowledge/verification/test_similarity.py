"""Near-duplicate detection: case, punctuation and word stems folded; Chinese by character."""

from __future__ import annotations

import pytest

from knowledge.verification.similarity import duplicate_pairs, nearest, similarity


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Prefers Debian base images", "User prefers Debian base image."),
        ("Deploys with docker compose", "deploying with Docker-Compose!"),
        ("用户喜欢用四个空格缩进", "用户喜欢四个空格缩进"),
    ],
)
def test_same_fact_in_other_words_is_a_near_duplicate(a, b):
    assert similarity(a, b) >= 0.75


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Prefers Debian base images", "Prefers Alpine base images for CI builds"),
        ("Works in Berlin (CET)", "Deploys with docker compose"),
        ("用户喜欢用四个空格缩进", "用户喜欢用 yarn 安装依赖"),
    ],
)
def test_different_facts_are_not(a, b):
    assert similarity(a, b) < 0.75


def test_nearest_names_where_the_similar_entry_is():
    match = nearest(
        "user prefers debian base images", [("memory", "Uses tabs"), ("user", "Prefers Debian base images")]
    )
    assert match is not None and (match.where, match.text) == ("user", "Prefers Debian base images")
    assert nearest("Completely different", [("user", "Prefers Debian base images")]) is None


def test_duplicate_pairs_across_both_files():
    pairs = duplicate_pairs(
        [("memory", "Deploys with docker compose"), ("user", "Uses Vim"), ("user", "deploys with Docker Compose")]
    )
    assert [(a.where, b.where) for a, b in pairs] == [("memory", "user")]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("server A runs nginx", "server B runs nginx"),
        ("The staging DB is on host db1.internal", "The staging DB is on host db2.internal"),
        ("Backups run at 02:00 from /var/lib/app", "Backups run at 03:00 from /var/lib/app"),
        ("Pinned to Django 5.1", "Pinned to Django 5.2"),
        ("Release freeze starts 2026-12-14", "Release freeze starts 2026-12-21"),
    ],
)
def test_entries_naming_different_things_are_never_duplicates(a, b):
    assert similarity(a, b) >= 0.5  # they look alike…
    assert nearest(a, [("memory", b)]) is None  # …but say two things
    assert duplicate_pairs([("memory", a), ("memory", b)]) == []
