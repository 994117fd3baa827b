"""The checks on an answer of POST /embeddings (the client's use of them, against a scripted
server, is in test_structured_and_embeddings.py)."""

from __future__ import annotations

import pytest

from agent.llm.embeddings import BadEmbeddings, check_lengths, read_vectors


def _answer(*vectors: object) -> dict[str, object]:
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
    }


def test_vectors_are_floats_in_the_order_of_the_texts():
    answer = {"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [1, 0.5]}]}
    assert read_vectors(answer, 2) == [[1.0, 0.5], [0.0, 2.0]]


def test_items_without_a_usable_index_keep_the_order_they_came_in():
    answer = {"data": [{"embedding": [1.0]}, {"embedding": [2.0]}]}
    assert read_vectors(answer, 2) == [[1.0], [2.0]]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (_answer([True, 0.1]), "other than finite numbers"),
        (_answer([float("nan")]), "other than finite numbers"),
        (_answer([]), "not a list of numbers"),
        (_answer([0.1], [0.2]), "1 texts were sent, 2 embeddings came back"),
        ([[0.1]], "no list of embeddings"),
    ],
    ids=["bool", "nan", "empty", "count", "bare-list"],
)
def test_an_unusable_answer_says_what_is_wrong(answer, reason):
    with pytest.raises(BadEmbeddings, match=reason):
        read_vectors(answer, 1)


def test_vectors_of_different_lengths_are_refused_together():
    check_lengths([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(BadEmbeddings, match="not all of one length"):
        check_lengths([[0.1, 0.2], [0.3]])
