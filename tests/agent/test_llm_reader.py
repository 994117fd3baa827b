"""Replies read by what they are, not by what was asked: SSE fields, JSON bodies, JSON lines, HTML."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agent.llm import LLMError
from agent.llm.errors import readable_detail
from agent.llm.reader import read_payloads


class _Response:
    """The few parts of an HTTP response the reader uses, with the bytes a server sent."""

    def __init__(self, text: str, content_type: str = "", status: int = 200) -> None:
        self.headers = {"content-type": content_type} if content_type else {}
        self.status_code = status
        self.url = "http://gateway.example/v1/chat/completions"
        self._text = text

    def iter_lines(self) -> Iterator[str]:
        yield from self._text.splitlines()


def _data(response: _Response) -> list[dict]:
    return [p.data for p in read_payloads(response, "http://gateway.example/v1")]


def _chunk(text: str) -> dict:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}


def test_sse_fields_other_than_data_and_comments_are_ignored():
    text = (
        "retry: 3000\n\n: keep-alive\n\nevent: message\nid: 1\ndata: " + json.dumps(_chunk("a")) + "\n\n"
        "data:" + json.dumps(_chunk("b")) + "\n\ndata: ping\n\ndata: [DONE]\n\ndata: " + json.dumps(_chunk("x"))
    )
    assert [d["choices"][0]["delta"]["content"] for d in _data(_Response(text, "text/event-stream"))] == ["a", "b"]


def test_an_event_whose_data_spans_lines_is_one_object():
    whole = json.dumps(_chunk("joined"))
    cut = whole.index(', "choices"') + 1  # between two members: the joining newline is whitespace
    first, second = whole[:cut], whole[cut:]
    assert _data(_Response(f"data: {first}\ndata: {second}\n\n", "text/event-stream")) == [_chunk("joined")]


def test_events_are_recognised_without_the_content_type():
    assert _data(_Response("data: " + json.dumps(_chunk("a")) + "\n\ndata: [DONE]\n", "application/json")) == [
        _chunk("a")
    ]


def test_one_json_body_is_a_whole_reply_and_json_lines_are_chunks():
    whole = {"object": "chat.completion", "choices": [{"index": 0, "message": {"content": "hi"}}]}
    payloads = list(read_payloads(_Response(json.dumps(whole), "application/json"), "x"))
    assert [p.whole for p in payloads] == [True]
    lines = "\n".join(json.dumps(_chunk(t)) for t in "ab")
    assert [p.whole for p in read_payloads(_Response(lines, "application/x-ndjson"), "x")] == [False, False]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('{"hello": "world"}', "not a valid chat completion"),
        ('{"choices": []}', "returned no choices"),
        (
            '{"error": {"message": "Provider disconnected."}}',
            "reported an error while answering: Provider disconnected.",
        ),
        ("[1, 2]", "not a valid chat completion"),
    ],
)
def test_a_json_body_that_is_not_a_completion_is_said_plainly(body, said):
    with pytest.raises(LLMError) as err:
        _data(_Response(body, "application/json"))
    assert said in err.value.message and err.value.message.count(".") >= 1 and ".." not in err.value.message


def test_an_html_page_is_named_with_its_title_and_url():
    page = "<!DOCTYPE html>\n<html><head>\n<title>\n  Access denied | Cloudflare\n</title></head><body>x</body></html>"
    with pytest.raises(LLMError) as err:
        _data(_Response(page, "text/html; charset=utf-8"))
    message = err.value.message
    assert "http://gateway.example/v1/chat/completions" in message and "“Access denied | Cloudflare”" in message
    assert "HTTP 200" in message and "<" not in message


def test_an_html_error_page_says_what_it_is():
    detail = readable_detail("<html><head><title>403 Forbidden</title></head><body>nginx</body></html>")
    assert detail.startswith("an HTML page (“403 Forbidden”), likely a proxy")


def test_an_empty_reply_has_no_payloads():
    assert _data(_Response("\n\n", "text/event-stream")) == []


def test_plain_text_is_quoted_and_an_error_list_is_read():
    with pytest.raises(LLMError, match="not a valid chat completion \\(it began “Internal Server Error”\\)"):
        _data(_Response("Internal Server Error\n", "text/plain"))
    with pytest.raises(LLMError, match="reported an error while answering: quota exhausted"):
        _data(_Response('[{"error": {"code": 429, "message": "quota exhausted"}}]', "application/json"))


def test_events_without_blank_lines_between_them_are_each_read():
    text = "".join("data: " + json.dumps(_chunk(t)) + "\n" for t in "abc") + "data: [DONE]\n"
    assert [d["choices"][0]["delta"]["content"] for d in _data(_Response(text, "text/event-stream"))] == list("abc")


def test_vllms_error_object_inside_a_stream_is_the_error():
    text = (
        "data: "
        + json.dumps(_chunk("a"))
        + '\n\ndata: {"object": "error", "message": "Prompt too long.", "code": 400}\n\n'
    )
    with pytest.raises(LLMError, match="reported an error while answering: Prompt too long.$"):
        _data(_Response(text, "text/event-stream"))
