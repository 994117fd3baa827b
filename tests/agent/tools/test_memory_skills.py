"""Memory against skills, through the real memory tool: an entry restating a skill is refused naming
the skill; a review's procedure is told it belongs in a skill; facts that merely share words with a
skill are saved."""

from __future__ import annotations

import json

import pytest

from agent.tools.memory_skills import is_procedure
from agent.tools.memory_tool import memory_tool
from agent.tools.registry import ToolContext
from knowledge.memory.store import MemoryStore
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore

pytestmark = pytest.mark.django_db

SKILL = (
    "---\nname: rotate-nginx-logs\ndescription: Rotate the nginx logs on the web hosts without dropping requests\n"
    "---\n# Steps\n1. Run logrotate -f /etc/logrotate.d/nginx\n2. Send nginx USR1 so it reopens its logs\n"
    "3. Check the new access.log is being written\n"
)


def call(args, actor: str = "agent"):
    return json.loads(memory_tool().handler(args, ToolContext(actor=actor)).content())


@pytest.fixture
def skill(home):
    SkillStore().create("rotate-nginx-logs", SKILL, prov=Provenance(actor="user"))


def test_an_entry_restating_a_skills_description_is_refused_naming_it(skill):
    result = call(
        {"target": "memory", "action": "add", "content": "Rotate nginx logs on the web hosts without dropping requests"}
    )
    assert result["success"] is False and "rotate-nginx-logs" in result["error"]
    assert MemoryStore().entries("memory") == []


def test_an_entry_restating_a_skills_steps_is_refused_naming_it(skill):
    steps = "To rotate logs: first run logrotate -f /etc/logrotate.d/nginx, then send nginx USR1 to reopen its logs"
    result = call({"target": "memory", "action": "add", "content": steps})
    assert result["success"] is False and "restates the skill 'rotate-nginx-logs'" in result["error"]


def test_a_review_saving_a_procedure_as_memory_is_told_it_belongs_in_a_skill(home):
    procedure = "Release: 1. bump the version in pyproject.toml 2. tag it 3. push the tag to trigger CI"
    result = call({"target": "memory", "action": "add", "content": procedure, "evidence": ["x"]}, actor="review")
    assert result["success"] is False and "procedures belong in a skill" in result["error"]
    assert "skill_manage" in result["error"] and MemoryStore().entries("memory") == []


def test_facts_that_share_words_with_a_skill_are_saved(skill):
    fact = "The web hosts keep nginx logs for 14 days"
    assert call({"target": "memory", "action": "add", "content": fact})["success"] is True
    # The chatting agent may keep a short how-to note of its own; only learned writes are redirected.
    note = "Build: first run make deps, then make build"
    assert call({"target": "memory", "action": "add", "content": note})["success"] is True
    assert MemoryStore().entries("memory") == [fact, note]


@pytest.mark.parametrize(
    "text, procedure",
    [
        ("1. stop the service 2. restore the dump", True),
        ("First drain the node, then reboot it", True),
        ("先停掉服务，然后恢复备份", True),
        ("- pull\n- build\n- deploy", True),
        ("Prefers 2-space indents", False),
        ("Runs Python 3.12 on the build server", False),
        ("Then again, they like tea", False),
    ],
)
def test_what_counts_as_a_procedure(text, procedure):
    assert is_procedure(text) is procedure
