"""Conflicts: the same subject, something else said about it."""

from __future__ import annotations

import pytest

from knowledge.verification.conflicts import find, same_subject


@pytest.mark.parametrize(
    ("new", "old", "values_only"),
    [
        ("Prefers 3-space indents", "Prefers 8-space indents", True),
        ("Runs Node 20 in CI", "Runs Node 18 in CI", True),
        ("Prefers Helix as editor", "Prefers Neovim as editor", False),
        ("Uses a light theme in terminals", "Prefers dark themes in every terminal", False),
        ("用户喜欢用两个空格缩进", "用户喜欢用四个空格缩进", False),
    ],
)
def test_same_subject_saying_something_else_is_a_conflict(new, old, values_only):
    found = find(new, [("user", "Deploys with docker compose"), ("user", old)])
    assert found is not None and found.text == old and found.values_only is values_only


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("host web1 runs caddy", "host web2 runs caddy"),
        ("Server X has 64 GB of RAM", "Server Y has 64 GB of RAM"),
        ("Config lives in /srv/app/config.toml", "Config lives in /opt/app/config.toml"),
        ("Writes Go at work", "Drinks green tea"),
    ],
)
def test_different_things_or_subjects_are_no_conflict(a, b):
    assert not same_subject(a, b)
    assert find(a, [("memory", b)]) is None


def test_the_same_entry_is_no_conflict():
    assert find("Prefers dark mode", [("user", "prefers  dark mode")]) is None
