"""What a tool hands back: `ToolResult(ok, data, error)`, serialised once, where the loop appends
the tool message the model reads.

The JSON the model sees is the tool protocol it has always seen: `{"success": true, ...data}` or
`{"success": false, "error": ..., ...data}` (the listing of skills_list carries no "success" flag,
as in Hermes). Whether a call failed is `ok`, never found by looking into the text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Tool results are capped so one runaway tool cannot blow the context window; the chat page's
# tool card shows the same head of a result.
MAX_RESULT_CHARS = 20_000
# How every failure starts once serialised: "success" is always the first key.
_FAILED_HEAD = '{"success": false'


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    data: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None
    # False only for a plain listing whose JSON has never carried "success" (skills_list).
    flagged: bool = True

    @classmethod
    def success(cls, **data: Any) -> ToolResult:
        return cls(True, data)

    @classmethod
    def failure(cls, message: str, **data: Any) -> ToolResult:
        return cls(False, data, message)

    @classmethod
    def listing(cls, **data: Any) -> ToolResult:
        """A successful read whose JSON is the data alone (no "success" key)."""
        return cls(True, data, flagged=False)

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> ToolResult:
        """A result already shaped as the tool protocol (`{"success": ..., "error"?: ..., ...}`)."""
        data = {k: v for k, v in payload.items() if k not in ("success", "error")}
        if payload.get("success") is False:
            return cls(False, data, str(payload.get("error", "")))
        return cls(True, data, flagged="success" in payload)

    def payload(self) -> dict[str, Any]:
        """The result as the model reads it (before the length cap)."""
        if not self.ok:
            return {"success": False, "error": self.error or "", **self.data}
        return {"success": True, **self.data} if self.flagged else dict(self.data)

    def to_json(self) -> str:
        return json.dumps(self.payload(), ensure_ascii=False)

    def content(self) -> str:
        """The tool message's content: the JSON, capped at MAX_RESULT_CHARS with its full length said."""
        text = self.to_json()
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n…[truncated: result was {len(text)} characters]"
        return text


def stored_ok(content: str) -> bool:
    """Whether a stored tool message reports success. Results are read back as JSON; one cut at
    MAX_RESULT_CHARS is no longer JSON, but its head still says whether it failed."""
    try:
        data: Any = json.loads(content)
    except ValueError:
        return not content.startswith(_FAILED_HEAD)
    return not (isinstance(data, dict) and data.get("success") is False)
