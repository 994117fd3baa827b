"""A tool's result as data, and the JSON the model reads from it (the tool protocol, unchanged)."""

from __future__ import annotations

import json

from agent.tools.results import MAX_RESULT_CHARS, ToolResult, stored_ok


def test_success_puts_the_flag_first_then_the_data_in_order():
    result = ToolResult.success(changed=True, message="Memory updated")
    assert result.ok and result.error is None
    assert result.content() == '{"success": true, "changed": true, "message": "Memory updated"}'


def test_failure_says_the_error_right_after_the_flag():
    result = ToolResult.failure("No entry matches 'vim'.", target="user")
    assert not result.ok and result.error == "No entry matches 'vim'."
    assert result.content() == '{"success": false, "error": "No entry matches \'vim\'.", "target": "user"}'


def test_text_outside_ascii_reaches_the_model_as_written():
    assert (
        ToolResult.success(message="用户资料已更新 💾").content() == '{"success": true, "message": "用户资料已更新 💾"}'
    )


def test_a_listing_carries_no_flag_but_is_a_success():
    listing = ToolResult.listing(skills=[], count=0)
    assert listing.ok and listing.content() == '{"skills": [], "count": 0}'
    assert ToolResult.listing().content() == "{}"


def test_a_payload_in_the_tool_protocol_keeps_its_meaning():
    failed = ToolResult.from_payload({"success": False, "error": "full", "target": "memory", "usage": "99%"})
    assert (failed.ok, failed.error, dict(failed.data)) == (False, "full", {"target": "memory", "usage": "99%"})
    done = ToolResult.from_payload({"success": True, "done": True, "changed": False})
    assert done.ok and done.payload() == {"success": True, "done": True, "changed": False}
    assert ToolResult.from_payload({"count": 2}).content() == '{"count": 2}'


def test_a_huge_result_is_cut_stays_json_and_says_its_full_length():
    result = ToolResult.success(text="y" * (2 * MAX_RESULT_CHARS))
    full = result.to_json()
    cut = json.loads(result.content())
    assert cut["success"] is True and cut["truncated"] is True and cut["total_chars"] == len(full)
    assert cut["content"] == full[:MAX_RESULT_CHARS] and cut["content"].startswith('{"success": true, "text": "yyy')
    assert f"{len(full):,} characters" in cut["note"]


def test_a_result_is_cut_at_the_limit_its_tool_sets():
    result = ToolResult.failure("z" * 500)
    assert result.content(1000) == result.to_json()
    cut = json.loads(result.content(100))
    assert cut["success"] is False and len(cut["content"]) == 100


def test_a_stored_result_is_read_back_as_json_not_searched():
    assert stored_ok(ToolResult.success(note='"success": false is just text here').content())
    assert not stored_ok(ToolResult.failure("no").content())
    assert not stored_ok(json.dumps({"count": 1, "success": False}))  # the flag need not come first
    assert stored_ok("plain text a tool wrote before results were JSON")


def test_a_stored_result_cut_at_the_cap_keeps_its_flag():
    cut = ToolResult.failure("x" * (2 * MAX_RESULT_CHARS)).content()
    assert not stored_ok(cut)
    assert stored_ok(ToolResult.success(text="x" * (2 * MAX_RESULT_CHARS)).content())
