"""Which skills a turn used and how the turn went after loading them (knowledge/skills/outcomes.py)."""

from __future__ import annotations

import json
from typing import Any

from knowledge.skills.outcomes import Use


class SkillUseTracker:
    def __init__(self, slash_name: str | None = None) -> None:
        self._order: list[str] = []
        self._via: dict[str, str] = {}
        self._failure: dict[str, str] = {}
        if slash_name:
            self._load(slash_name, "slash")

    def _load(self, name: str, via: str) -> None:
        if name not in self._via:
            self._order.append(name)
            self._via[name] = via

    def tool_finished(self, tool: str, content: str) -> None:
        try:
            data: Any = json.loads(content or "{}")
        except json.JSONDecodeError:
            data = {}
        ok = isinstance(data, dict) and data.get("success") is not False
        if tool == "skill_view" and ok and isinstance(data, dict) and isinstance(data.get("name"), str):
            self._load(data["name"], "view")
            return
        if not ok:
            error = str(data.get("error") if isinstance(data, dict) else content)[:300]
            for name in self._order:
                # The first error after a skill was loaded is the one worth telling its review.
                self._failure.setdefault(name, f"{tool} failed: {error}")

    def uses(self, *, interrupted: bool, error: str = "") -> list[Use]:
        result = []
        for name in self._order:
            if name in self._failure:
                result.append(Use(name, self._via[name], "tool_error", self._failure[name]))
            elif interrupted or error:
                detail = f"The answer ended early: {error}" if error else "The person stopped the answer."
                result.append(Use(name, self._via[name], "interrupted", detail))
            else:
                result.append(Use(name, self._via[name]))
        return result
