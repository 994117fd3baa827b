"""The default tool registry follows the configuration (a target switched off leaves
the tool; both off, the tool goes)."""

from __future__ import annotations

import json

import pytest

from agent.tools.registry import ToolContext
from agent.toolset import build_registry
from foundation import config as hermes_config
from tests.conftest import write_config

ALL = ["memory", "skills_list", "skill_view", "skill_manage", "session_search"]


def test_default_registry_offers_every_tool(home):
    assert sorted(build_registry(hermes_config.get()).names()) == sorted(ALL)


@pytest.mark.django_db
def test_user_profile_off_keeps_the_tool_and_refuses_that_target(home):
    write_config(home, "memory:\n  user_profile_enabled: false\n")
    registry = build_registry(hermes_config.get())
    assert "memory" in registry
    args = {"target": "user", "action": "add", "content": "Name: Ada"}
    refused = json.loads(registry.dispatch("memory", args, ToolContext()).content())
    assert refused["success"] is False
    assert not (home / "memories" / "USER.md").exists()
    args = {"target": "memory", "action": "add", "content": "Repo uses uv"}
    assert json.loads(registry.dispatch("memory", args, ToolContext()).content())["success"] is True


def test_both_targets_off_remove_the_memory_tool(home):
    write_config(home, "memory:\n  memory_enabled: false\n  user_profile_enabled: false\n")
    registry = build_registry(hermes_config.get())
    assert "memory" not in registry
    assert sorted(registry.names()) == sorted(n for n in ALL if n != "memory")
    assert "not available" in registry.dispatch("memory", {"target": "memory"}, ToolContext()).content()
