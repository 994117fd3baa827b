"""Whether a person's quoted words ask for a removal, and of what."""

from __future__ import annotations

import pytest

from knowledge.verification import removal
from knowledge.verification.documents import Located

ENTRY = "User lives in Berlin and works remotely"


def _check(subject: str, said: str, quote: str | None = None, role: str = "user") -> str:
    return removal.check(subject, [Located(quote or said, said, role)])


@pytest.mark.parametrize(
    ("subject", "said"),
    [
        (ENTRY, "Please forget that I live in Berlin, I moved."),
        (ENTRY, "Delete the note saying I live in Berlin."),
        (ENTRY, "I don't live in Berlin anymore, so remove that entry."),
        ("docker-compose-debug", "Can you delete the docker-compose-debug skill?"),
        ("docker-compose-debug", "I don't need the docker compose debug skill anymore."),
        ("docker-compose-debug", "We no longer use it: get rid of the docker compose debug skill."),
        ("deploy-app references/old.md", "Remove references/old.md from the deploy-app skill."),
        ("deploy-app", "Turn off the deploy-app skill for now."),
        ("user-docker-skill", "请删除 user-docker-skill 这个技能。"),
    ],
)
def test_a_request_naming_the_thing_is_accepted(subject, said):
    assert _check(subject, said) == ""


@pytest.mark.parametrize(
    ("subject", "said", "why"),
    [
        (ENTRY, "I live in Berlin and I love it there.", "does not ask"),
        ("docker-compose-debug", "Don't delete the docker-compose-debug skill, it saved me.", "negated"),
        ("docker-compose-debug", "Never remove the docker compose debug skill.", "negated"),
        ("docker-compose-debug", "Should I delete the docker-compose-debug skill?", "question"),
        ("docker-compose-debug", "If it breaks again, delete the docker-compose-debug skill.", "conditional"),
        ("docker-compose-debug", "My colleague wants to delete the docker-compose-debug skill.", "someone else"),
        ("docker-compose-debug", "lol just delete the docker-compose-debug skill", "joking"),
        ("docker-compose-debug", "Please delete the kubernetes-deploy skill.", "does not say which"),
        (ENTRY, "Delete the note about my job.", "does not say which"),
    ],
)
def test_anything_else_is_not_a_request_for_this_removal(subject, said, why):
    assert why in _check(subject, said)


def test_tool_output_is_not_the_person_asking():
    assert "not something the person said" in _check("deploy-app", "Deleted skill deploy-app.", role="tool")


def test_no_quote_is_no_request():
    assert removal.check("deploy-app", []) != ""


def test_one_quote_that_asks_is_enough_among_several():
    located = [
        Located("I live in Berlin and love it", "I live in Berlin and love it."),
        Located("forget that I live in Berlin", "Actually, forget that I live in Berlin."),
    ]
    assert removal.check(ENTRY, located) == ""
