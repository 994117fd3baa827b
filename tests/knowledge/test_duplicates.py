"""Near duplicates refused before saving or queuing: memory entries across both files, skills."""

from __future__ import annotations

import json

import pytest

from agent.tools.memory_tool import memory_tool
from agent.tools.registry import ToolContext
from agent.tools.skill_tools import make_tools
from knowledge.duplicates import memory_duplicate, skill_duplicate
from knowledge.memory_store import MemoryStore
from knowledge.models import PendingWrite
from knowledge.provenance import Provenance
from knowledge.skills import SkillStore

pytestmark = pytest.mark.django_db

USER = Provenance(actor="user")


def test_entry_repeating_the_other_file_is_refused_and_replace_of_itself_is_not(home):
    store = MemoryStore()
    store.add("user", "Prefers Debian base images", USER)
    error = memory_duplicate(store, "memory", [{"action": "add", "content": "prefers debian base image"}])
    assert error is not None and "Prefers Debian base images" in error and "replace" in error
    same = [{"action": "replace", "old_text": "Debian", "content": "Prefers Debian base images, slim"}]
    assert memory_duplicate(store, "user", same) is None


def test_staged_review_write_never_repeats_a_saved_entry(home):
    MemoryStore().add("user", "Prefers Debian base images", USER)
    ctx = ToolContext(
        actor="review", stage_writes={"memory": True}, seen=[{"role": "user", "content": "I prefer Debian base images"}]
    )
    args = {
        "target": "user",
        "action": "add",
        "content": "Prefers Debian base images.",
        "evidence": "prefer Debian base images",
    }
    result = json.loads(memory_tool().handler(args, ctx))
    assert result["success"] is False and "nearly repeats" in result["error"]
    assert not PendingWrite.objects.exists()


def test_exact_repeat_in_the_same_file_stays_the_stores_no_op(home):
    MemoryStore().add("user", "Uses vim", USER)
    result = json.loads(
        memory_tool().handler({"target": "user", "action": "add", "content": "Uses vim"}, ToolContext(actor="user"))
    )
    assert result["success"] is True and result["changed"] is False


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
    result = json.loads(manage.handler(args, ToolContext(actor="agent")))
    assert result["success"] is False and "docker-compose-debug" in result["error"]
    assert [s.name for s in SkillStore().list()] == ["docker-compose-debug"]
