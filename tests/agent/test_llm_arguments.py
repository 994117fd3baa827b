"""Argument streams merged by what their pieces are, and the object found in what models wrap it in."""

from __future__ import annotations

import json

import pytest

from agent.llm.arguments import decode_arguments
from agent.llm.assemble import Assembler, ToolCallAccumulator

OBJ = {"a": 1, "b": [1, 2]}


@pytest.mark.parametrize(
    "pieces",
    [
        ['{"a": 1, ', '"b": [1, 2]}'],  # new pieces
        ['{"a"', '{"a": 1, "b"', '{"a": 1, "b": [1, 2]}'],  # the whole arguments so far, each time
        ['{"a": 1, ', '"b": [1, 2]}', '{"a": 1, "b": [1, 2]}'],  # pieces, then the whole again
        ['{"a": 1, ', '"b": [1, 2]}', '{"a":1,"b":[1,2]}'],  # ... spaced differently
        ['"{\\"a\\": 1, ', '\\"b\\": [1, 2]}"'],  # a JSON string holding the object
    ],
)
def test_argument_streams_are_merged_by_what_their_pieces_are(pieces):
    acc = ToolCallAccumulator()
    acc.feed({"index": 0, "id": "c1", "function": {"name": "memory", "arguments": ""}})
    for piece in pieces:
        acc.feed({"index": 0, "function": {"arguments": piece}})
    assert [json.loads(c.arguments) for c in acc.calls()] == [OBJ]


@pytest.mark.parametrize(
    "text",
    ['```json\n{"a": 1, "b": [1, 2]}\n```', '{"a": 1, "b": [1, 2]}<|im_end|>', ' {"a": 1, "b": [1, 2]}\n'],
)
def test_the_object_is_found_inside_a_fence_or_before_a_stray_token(text):
    assert json.loads(decode_arguments(text)) == OBJ


@pytest.mark.parametrize("text", ['{"a": 1}{"b": 2}', '{"a": 1} and then a long explanation of why it did that', "{"])
def test_text_that_is_more_than_one_object_is_left_for_the_tool_to_refuse(text):
    assert decode_arguments(text) == text


def test_whole_calls_without_index_or_id_are_separate_calls_and_a_repeat_is_not():
    acc = ToolCallAccumulator()
    for content in ("one", "two", "two"):
        acc.feed({"function": {"name": "memory", "arguments": json.dumps({"content": content})}})
    assert [json.loads(c.arguments)["content"] for c in acc.calls()] == ["one", "two"]


def test_the_functions_api_call_of_older_servers_is_a_tool_call():
    asm = Assembler(tools_offered=True)
    asm.feed({"choices": [{"index": 0, "delta": {"function_call": {"name": "memory", "arguments": '{"a": '}}}]})
    asm.feed(
        {"choices": [{"index": 0, "delta": {"function_call": {"arguments": "1}"}}, "finish_reason": "function_call"}]}
    )
    _, reply = asm.finish()
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("memory", '{"a": 1}')]


def test_a_last_chunk_repeating_the_whole_message_adds_nothing_twice():
    asm = Assembler(tools_offered=False)
    asm.feed({"choices": [{"index": 0, "delta": {"content": "Hello "}}]})
    asm.feed({"choices": [{"index": 0, "delta": {"content": "there."}}]})
    asm.feed({"choices": [{"index": 0, "message": {"content": "Hello there."}, "finish_reason": "stop"}]})
    _, reply = asm.finish()
    assert reply.content == "Hello there."


def test_a_closing_think_tag_without_its_opening_keeps_the_thinking_out_of_the_stored_answer():
    asm = Assembler(tools_offered=False)
    asm.feed({"choices": [{"index": 0, "delta": {"content": "Plan it.</think>\n\nDone."}, "finish_reason": "stop"}]})
    _, reply = asm.finish()
    assert (reply.content, reply.reasoning) == ("Done.", "Plan it.")
