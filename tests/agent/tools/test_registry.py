"""The tool dispatcher: every failure is a result the model can act on."""

from __future__ import annotations

import json
from typing import Any

from agent.tools.registry import Tool, ToolContext, ToolRegistry
from agent.tools.results import MAX_RESULT_CHARS, ToolResult


def _echo(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult.success(args=args, actor=ctx.actor)


def _boom(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raise KeyError("missing")


def _huge(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult.success(text="x" * MAX_RESULT_CHARS)


def _registry() -> ToolRegistry:
    params = {"type": "object", "properties": {}}
    return ToolRegistry(
        [Tool("echo", "Echo", params, _echo), Tool("boom", "Fails", params, _boom), Tool("huge", "Big", params, _huge)]
    )


def _error(result: ToolResult) -> str:
    data = json.loads(result.content())
    assert data["success"] is False and not result.ok
    return str(data["error"])


def test_arguments_arrive_as_a_dict_whether_sent_as_json_text_or_an_object():
    reg = _registry()
    ctx = ToolContext(actor="review")
    echoed = reg.dispatch("echo", '{"a": 1}', ctx)
    assert json.loads(echoed.content()) == {"success": True, "args": {"a": 1}, "actor": "review"}
    assert reg.dispatch("echo", {"b": 2}, ctx).data["args"] == {"b": 2}
    assert reg.dispatch("echo", "", ctx).data["args"] == {}
    assert reg.dispatch("echo", None, ctx).data["args"] == {}


def test_unknown_tool_names_the_available_ones():
    error = _error(_registry().dispatch("shell", "{}", ToolContext()))
    assert "'shell' is not available" in error and "boom, echo, huge" in error


def test_malformed_json_arguments_say_where_and_what_to_send():
    error = _error(_registry().dispatch("echo", '{"a": 1', ToolContext()))
    assert "not valid JSON" in error and "position" in error and "JSON object" in error
    assert "must be a JSON object" in _error(_registry().dispatch("echo", "[1, 2]", ToolContext()))


def test_a_tool_exception_becomes_a_result():
    assert _error(_registry().dispatch("boom", "{}", ToolContext())) == "Tool 'boom' failed: KeyError: 'missing'"


def test_results_are_capped_and_stay_json_that_says_how_long_they_were():
    full = _registry().dispatch("huge", "{}", ToolContext()).to_json()
    result = json.loads(_registry().dispatch("huge", "{}", ToolContext()).content())
    assert result["success"] is True and result["truncated"] is True
    assert result["content"] == full[:MAX_RESULT_CHARS] and result["content"].startswith(
        '{"success": true, "text": "xxx'
    )
    assert result["total_chars"] == len(full) and f"{len(full):,} characters" in result["note"]


def test_a_cut_json_result_keeps_its_success_flag():
    failing = Tool("fail", "", {"type": "object"}, lambda a, c: ToolResult.failure("y" * 30_000))
    result = json.loads(ToolRegistry([failing]).dispatch("fail", {}, ToolContext()).content())
    assert result["success"] is False and result["truncated"] is True


def test_a_result_is_cut_at_the_limit_it_is_given():
    result = json.loads(_registry().dispatch("huge", "{}", ToolContext()).content(100))
    assert result["truncated"] is True and len(result["content"]) == 100


def test_a_subset_refuses_everything_else():
    sub = _registry().subset(["echo", "not-registered"])
    assert sub.names() == ["echo"]
    assert "echo" in sub and "boom" not in sub
    assert "not available here. Available tools: echo." in _error(sub.dispatch("boom", "{}", ToolContext()))
    assert "not available here. Available tools: none." in _error(ToolRegistry().dispatch("echo", "{}", ToolContext()))


def test_schemas_are_openai_function_tools():
    assert _registry().schemas()[0] == {
        "type": "function",
        "function": {"name": "echo", "description": "Echo", "parameters": {"type": "object", "properties": {}}},
    }


def test_context_provenance_carries_who_called():
    prov = ToolContext(actor="flush", session_id="s", review_id=3, message_id=9).provenance()
    assert (prov.actor, prov.session_id, prov.review_id, prov.message_id) == ("flush", "s", 3, 9)
