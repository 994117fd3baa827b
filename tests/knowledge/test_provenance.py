"""Provenance: who made a change, checked against the one list of actors the pages label."""

from __future__ import annotations

import dataclasses

import pytest

from knowledge.models import KnowledgeChange
from knowledge.provenance import ACTOR_LABELS, ACTORS, Provenance


def test_every_known_actor_is_accepted_and_labelled():
    for actor in ACTORS:
        assert Provenance(actor=actor).actor == actor
    assert ACTOR_LABELS["external"] == "external edit" and ACTOR_LABELS["agent"] == "main agent"


def test_an_unknown_actor_is_refused_with_its_name():
    with pytest.raises(ValueError, match="unknown actor 'robot'"):
        Provenance(actor="robot")


def test_the_change_log_offers_the_same_actors():
    assert [value for value, _ in KnowledgeChange.ACTORS] == list(ACTORS)


def test_provenance_is_a_value_defaulting_to_the_user():
    prov = Provenance(session_id="s", review_id=1)
    assert prov == Provenance(actor="user", session_id="s", review_id=1, message_id=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        prov.actor = "agent"  # type: ignore[misc]
