"""The existing entries nearest to a proposed one: by meaning when the server embeds, by words otherwise."""

from __future__ import annotations

from agent.admission.nearest import rank
from agent.llm import LLMError
from knowledge.verification.similarity import similarity

ENTRIES = [("user", "Commutes by bicycle"), ("user", "Prefers tea over coffee"), ("memory", "Deploys with Kamal")]
# A paraphrase sharing no word with the entry it repeats: only meaning can pair them.
NEW = "Rides a bike to the office"


class Embedder:
    """A stand-in for the model client's embed(): related texts get near vectors."""

    def __init__(self, answer: str = "vectors") -> None:
        self.answer, self.calls = answer, 0

    def embed(self, texts: list[str]) -> list[list[float]] | None:
        self.calls += 1
        if self.answer == "none":
            return None
        if self.answer == "error":
            raise LLMError("the server is down")
        return [[1.0, 0.0] if ("bike" in t or "bicycle" in t) else [0.0, 1.0] for t in texts]


def test_a_paraphrase_with_no_word_in_common_is_found_by_meaning():
    assert rank(NEW, ENTRIES, similarity, llm=Embedder())[0] == ("user", "Commutes by bicycle")


def test_without_embeddings_or_when_they_fail_entries_are_ranked_by_words():
    by_words = rank("Deploys with Kamal to Hetzner", ENTRIES, similarity)
    for llm in (Embedder("none"), Embedder("error"), None):
        assert rank("Deploys with Kamal to Hetzner", ENTRIES, similarity, llm=llm) == by_words
    assert by_words[0] == ("memory", "Deploys with Kamal")


def test_each_text_is_embedded_once_per_run():
    llm, cache = Embedder(), dict[str, list[float]]()
    rank(NEW, ENTRIES, similarity, llm=llm, cache=cache)
    rank(NEW, ENTRIES, similarity, llm=llm, cache=cache)
    assert llm.calls == 1 and len(cache) == 4
