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

    def content(self, limit: int = MAX_RESULT_CHARS) -> str:
        """The tool message's content: the JSON, or past `limit` characters the JSON cut
        (`cut_result`), still a JSON object that says how long the result was."""
        text = self.to_json()
        if len(text) > limit:
            return cut_result(text, limit, success=self.ok)
        return text


def cut_result(result: str, limit: int, success: bool | None = None) -> str:
    """A result over its tool's limit, cut so it is still a JSON object the model can read: the
    first `limit` characters as `content`, `truncated: true` and the full size. `success` is
    the result's own flag when it is not given."""
    if success is None:
        try:
            success = json.loads(result).get("success", True) is not False
        except (json.JSONDecodeError, AttributeError):
            success = True
    return json.dumps(
        {
            "success": success,
            "truncated": True,
            "total_chars": len(result),
            "content": result[:limit],
            "note": f"The result was {len(result):,} characters; only the first {limit:,} are shown. "
            "Ask for less (a narrower query, one file, an offset) to see the rest.",
        },
        ensure_ascii=False,
    )


def stored_ok(content: str) -> bool:
    """Whether a stored tool message reports success. Results are read back as JSON (a cut one
    too: `cut_result` keeps the flag); text that is not JSON is judged by its head."""
    try:
        data: Any = json.loads(content)
    except ValueError:
        return not content.startswith(_FAILED_HEAD)
    return not (isinstance(data, dict) and data.get("success") is False)
