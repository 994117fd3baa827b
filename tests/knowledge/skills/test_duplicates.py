"""A new skill that nearly repeats an existing one is refused, naming the skill to patch instead."""

from __future__ import annotations

import json

import pytest

from agent.tools.registry import ToolContext
from agent.tools.skill_tools import make_tools
from knowledge.provenance import Provenance
from knowledge.skills.duplicates import skill_duplicate
from knowledge.skills.store import SkillStore

pytestmark = pytest.mark.django_db

USER = Provenance(actor="user")


SKILL = "---\nname: {name}\ndescription: {description}\n---\n# Steps\n1. Do it.\n"


def test_skill_with_a_near_duplicate_name_or_description_is_refused(home):
    SkillStore().create(
        "docker-compose-debug",
        SKILL.format(name="docker-compose-debug", description="Debug docker compose port clashes"),
        prov=USER,
    )
    store = SkillStore()
    by_name = skill_duplicate(
        store, "debug-docker-compose", SKILL.format(name="debug-docker-compose", description="Other words")
    )
    assert by_name is not None and "docker-compose-debug" in by_name
    by_text = skill_duplicate(
        store, "port-fixes", SKILL.format(name="port-fixes", description="Debugging Docker Compose port clashes")
    )
    assert by_text is not None and "Patch or edit 'docker-compose-debug'" in by_text
    assert (
        skill_duplicate(store, "git-bisect", SKILL.format(name="git-bisect", description="Find a bad commit")) is None
    )
    manage = {t.name: t for t in make_tools()}["skill_manage"]
    args = {
        "action": "create",
        "name": "port-fixes",
        "content": SKILL.format(name="port-fixes", description="Debug docker compose port clashes"),
    }
    result = json.loads(manage.handler(args, ToolContext(actor="agent")).content())
    assert result["success"] is False and "docker-compose-debug" in result["error"]
    assert [s.name for s in SkillStore().list()] == ["docker-compose-debug"]
