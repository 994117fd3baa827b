"""The default tool registry for a configured agent (browser, terminal and review share it)."""

from __future__ import annotations

from agent.tools import memory_tool, session_search, skill_tools
from agent.tools.registry import ToolRegistry
from foundation.config import Config


def build_registry(config: Config) -> ToolRegistry:
    registry = ToolRegistry()
    # A target switched off in config leaves the tool; with both off, the tool goes (docs/BEHAVIOUR.md, Memory).
    if config.memory_on:
        registry.register(memory_tool.make_tool())
    for tool in skill_tools.make_tools():
        registry.register(tool)
    registry.register(session_search.make_tool())
    return registry
