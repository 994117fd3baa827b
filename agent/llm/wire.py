"""The message list as this server accepts it (the loop's own list is never changed)."""

from __future__ import annotations

from typing import Any

from agent.llm.capabilities import Capabilities


def wire_messages(messages: list[dict[str, Any]], caps: Capabilities) -> list[dict[str, Any]]:
    out = [_text_images(dict(m), caps) for m in messages]
    if caps.reasoning_echo is False:
        for m in out:
            m.pop("reasoning_content", None)
    if caps.provider_echo is False:
        out = [_without_provider_fields(m) for m in out]
    if caps.system_role is False:
        out = _fold_system(out)
    return out


def _fold_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Gemma-style templates refuse the system role: its text leads the first user message."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    rest = [m for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for m in rest:
        if m.get("role") == "user":
            m["content"] = f"{system}\n\n{m.get('content') or ''}"
            return rest
    return [{"role": "user", "content": system}, *rest]


def _text_images(m: dict[str, Any], caps: Capabilities) -> dict[str, Any]:
    """Images the caller did not make into parts (a summary, a review) are named in the text;
    parts are made text again for a server known to refuse them."""
    refs = m.pop("images", None)
    if refs:
        names = "\n".join(f"[image: {r.get('name') or 'image'}]" for r in refs if isinstance(r, dict))
        m["content"] = f"{m.get('content') or ''}\n\n{names}".strip()
    content = m.get("content")
    if caps.images is False and isinstance(content, list):
        m["content"] = "\n\n".join(
            str(p.get("text") or "") if p.get("type") == "text" else "[image]" for p in content if isinstance(p, dict)
        )
    return m


def _without_provider_fields(m: dict[str, Any]) -> dict[str, Any]:
    m.pop("reasoning_details", None)
    m.pop("extra_content", None)
    if isinstance(m.get("tool_calls"), list):
        m["tool_calls"] = [
            {k: v for k, v in c.items() if k in ("id", "type", "function")} if isinstance(c, dict) else c
            for c in m["tool_calls"]
        ]
    return m
