"""Tool calls written in a model family's own template tokens, parsed from content."""

from __future__ import annotations

import json

import pytest

from agent.llm.textcalls import parse_text_calls

ARGS = {"target": "memory", "action": "add", "content": "tea"}
A = json.dumps(ARGS)

FORMATS = {
    "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.memory:0<|tool_call_argument_begin|>"
    + A
    + "<|tool_call_end|><|tool_calls_section_end|>",
    "deepseek_v3": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>memory\n```json\n"
    + A
    + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "deepseek_v31": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>memory<｜tool▁sep｜>"
    + A
    + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "mistral_list": '[TOOL_CALLS][{"name": "memory", "arguments": ' + A + "}]",
    "mistral_named": "[TOOL_CALLS]memory[ARGS]" + A,
    "llama3": '<|python_tag|>{"name": "memory", "parameters": ' + A + "}<|eom_id|>",
    "glm45": "<tool_call>memory\n<arg_key>target</arg_key>\n<arg_value>memory</arg_value>\n<arg_key>action</arg_key>"
    "\n<arg_value>add</arg_value>\n<arg_key>content</arg_key>\n<arg_value>tea</arg_value>\n</tool_call>",
    "gpt_oss": "<|channel|>commentary to=functions.memory <|constrain|>json<|message|>" + A + "<|call|>",
}


@pytest.mark.parametrize("name", FORMATS)
def test_each_template_format_as_the_whole_answer_gives_the_call_and_nothing_to_show(name):
    text, calls = parse_text_calls(FORMATS[name] + "\n")
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("memory", ARGS)]
    assert text == ""


@pytest.mark.parametrize("name", FORMATS)
def test_each_template_format_after_prose_is_the_answer_and_no_call(name):
    """Not a call, however well formed: a model quoting a pasted page that holds such markup
    looks exactly like this, and must not run it (agent/llm/textcalls.py). It is the answer,
    shown as written."""
    text, calls = parse_text_calls("Saving that. " + FORMATS[name])
    assert calls == [] and text == "Saving that. " + FORMATS[name]


def test_kimi_keeps_its_own_ids_for_parallel_calls():
    two = FORMATS["kimi_k2"].replace(
        "<|tool_calls_section_end|>",
        "<|tool_call_begin|>functions.memory:1<|tool_call_argument_begin|>" + A + "<|tool_call_end|>"
        "<|tool_calls_section_end|>",
    )
    assert [c.id for c in parse_text_calls(two)[1]] == ["functions.memory:0", "functions.memory:1"]


def test_gpt_oss_final_channel_is_the_answer():
    text, calls = parse_text_calls("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final"
                                   "<|message|>Hello there.<|return|>")  # fmt: skip
    assert calls == [] and text == "Hello there."


def test_prose_without_markup_is_left_alone():
    assert parse_text_calls("Use [brackets] and <b>tags</b> freely.") == ("Use [brackets] and <b>tags</b> freely.", [])
