"""The tool registry: a dict of name -> Tool, and the one dispatcher every driver uses.

Errors are data: whatever goes wrong inside a tool (bad JSON arguments, an unknown name, an
exception) comes back as a failed `ToolResult` that the model can act on. Nothing here knows
about Django, Channels or the terminal.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent.tools.results import MAX_RESULT_CHARS, ToolResult, cut_result
from knowledge.provenance import Provenance

__all__ = ["MAX_RESULT_CHARS", "Handler", "Tool", "ToolContext", "ToolRegistry", "ToolResult", "cut_result"]

log = logging.getLogger(__name__)


@dataclass
class ToolContext:
    """Who is calling a tool, for provenance (change log) and per-turn state.

    actor: "agent" (main loop), "review", "flush" or "user".
    turn_state: reset by the runner at each turn (e.g. the memory tool's failure count).
    """

    actor: str = "agent"
    session_id: str | None = None
    review_id: int | None = None
    message_id: int | None = None
    turn_state: dict[str, Any] = field(default_factory=dict)
    # Set for review runs when write approval is on: writes are staged, not applied.
    stage_writes: dict[str, bool] = field(default_factory=dict)
    # The running agent's model client (agent.llm.ChatClient), for tools that summarise.
    llm: Any = None
    # The messages the writer saw (the review's snapshot, the flush's scratch list, the main
    # agent's list): a write's evidence quotes are checked against these (knowledge/verification/evidence.py).
    seen: list[dict[str, Any]] = field(default_factory=list)
    # Main agent: the text of the turn's user message (message_id is its stored id), which is
    # recorded as the evidence of the agent's own writes.
    user_text: str = ""

    def provenance(self, evidence: tuple[tuple[str, int | None], ...] = ()) -> Provenance:
        return Provenance(
            actor=self.actor,
            session_id=self.session_id,
            review_id=self.review_id,
            message_id=self.message_id,
            evidence=evidence,
        )


Handler = Callable[[dict[str, Any], ToolContext], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    # Tools that only read may run in parallel with each other; writers run one at a time.
    parallel_safe: bool = False
    # What one result may hold; a tool that reads big documents (skill_view) sets its own.
    max_result_chars: int = MAX_RESULT_CHARS

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry holding only `names` — the dispatcher refuses anything else."""
        wanted = set(names)
        return ToolRegistry(t for n, t in self._tools.items() if n in wanted)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self._tools.values()]

    def dispatch(self, name: str, raw_arguments: str | dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            allowed = ", ".join(sorted(self._tools)) or "none"
            return ToolResult.failure(f"Tool '{name}' is not available here. Available tools: {allowed}.")
        if isinstance(raw_arguments, dict):
            args = raw_arguments
        else:
            try:
                args = json.loads(raw_arguments or "{}")
            except json.JSONDecodeError as exc:
                return ToolResult.failure(
                    f"The arguments for '{name}' are not valid JSON ({exc.msg} at position {exc.pos}). "
                    "Send a JSON object matching the tool's schema."
                )
            if not isinstance(args, dict):
                return ToolResult.failure(f"The arguments for '{name}' must be a JSON object.")
        try:
            return tool.handler(args, ctx)
        except Exception as exc:  # a tool bug must reach the model as data, not kill the turn
            log.exception("tool %s failed", name)
            return ToolResult.failure(f"Tool '{name}' failed: {type(exc).__name__}: {exc}")
