"""Recall by meaning, measured: paraphrased queries against a haystack of chat messages
(agent/learning_eval/recall.json), through the real search function.

Each case is a message someone wrote and a query that asks for it in other words: it shares no
content word with the message (`shared_words` checks it, by word and by a word's first five
letters, so "deploy" and "deployment" count as one). The haystack puts each target in a chat of
its own among ordinary messages and the assistant's short replies. `run` stores the haystack,
lets the background work embed it (agent/recall.py) and searches each query; a case is found
when its target is among the first `TOP` hits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent import recall
from knowledge.models import ChatSession, Message
from knowledge.search import search_messages

DATA = Path(__file__).with_name("recall.json")
TOP = 10
CHAT_SIZE = 3  # ordinary messages per chat of the haystack, each chat ending with a reply

# Words that carry no content, in each language of the set (recall.json's "stopwords").
STOPWORDS = frozenset(
    word for words in json.loads(DATA.read_text(encoding="utf-8"))["stopwords"].values() for word in words.split()
)
_WORD = re.compile(r"[\w'’-]+")


def content_words(text: str) -> set[str]:
    words = {w.strip("'’-").casefold() for w in _WORD.findall(text)}
    return {w for w in words if w and w not in STOPWORDS and not w.isdigit()}


def _same(a: str, b: str) -> bool:
    return a == b or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])


def shared_words(query: str, target: str) -> set[str]:
    """The query's content words that the target holds too (by word or by its first five letters)."""
    mine = content_words(target)
    return {q for q in content_words(query) if any(_same(q, t) for t in mine)}


@dataclass(frozen=True)
class Case:
    lang: str
    target: str
    query: str


@dataclass(frozen=True)
class Data:
    cases: list[Case]
    haystack: list[str]
    replies: list[str]

    @property
    def messages(self) -> int:
        """Messages the haystack stores: the targets, the ordinary ones, a reply per chat."""
        chats = len(self.cases) + -(-len(self.haystack) // CHAT_SIZE)
        return len(self.cases) + len(self.haystack) + chats


def load(path: Path = DATA) -> Data:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return Data([Case(**c) for c in raw["cases"]], list(raw["haystack"]), list(raw["replies"]))


@dataclass
class Result:
    case: Case
    rank: int | None  # 1-based rank of the target among the first TOP hits; None: not there
    by_meaning: bool  # the hit was found by meaning alone


@dataclass
class Report:
    results: list[Result] = field(default_factory=list)
    meaning: bool = False  # search took meaning into account

    def found(self, lang: str | None = None) -> tuple[int, int]:
        chosen = [r for r in self.results if lang is None or r.case.lang == lang]
        return sum(r.rank is not None for r in chosen), len(chosen)

    def share(self, lang: str | None = None) -> float:
        hit, total = self.found(lang)
        return hit / total if total else 0.0

    def lines(self) -> list[str]:
        langs = sorted({r.case.lang for r in self.results})
        out = [f"{lang}: {self.found(lang)[0]} of {self.found(lang)[1]} in the top {TOP}" for lang in langs]
        out.append(f"all: {self.found()[0]} of {self.found()[1]} ({self.share():.0%})")
        out += [f"  missed ({r.case.lang}): {r.case.query!r}" for r in self.results if r.rank is None]
        return out


def store_haystack(data: Data) -> dict[str, int]:
    """The haystack as chats; the id of each target's message."""
    targets: dict[str, int] = {}
    replies = iter(data.replies * (data.messages // max(1, len(data.replies)) + 1))
    for case in data.cases:
        chat = ChatSession.objects.create(title="")
        targets[case.target] = Message.objects.create(session=chat, role="user", content=case.target).id
        Message.objects.create(session=chat, role="assistant", content=next(replies))
    for start in range(0, len(data.haystack), CHAT_SIZE):
        chat = ChatSession.objects.create(title="")
        for text in data.haystack[start : start + CHAT_SIZE]:
            Message.objects.create(session=chat, role="user", content=text)
        Message.objects.create(session=chat, role="assistant", content=next(replies))
    return targets


def embed_everything(round_: Callable[[], recall.RoundResult] = recall.embed_backlog) -> int:
    """Run the background work's rounds until nothing is left; the messages embedded."""
    total = 0
    while (done := round_()).embedded:
        total += done.embedded
    return total


def run(data: Data | None = None) -> Report:
    """Store the haystack, embed it (when an embedding model is configured) and search each case."""
    data = data or load()
    targets = store_haystack(data)
    embed_everything()
    report = Report()
    for case in data.cases:
        page = search_messages(case.query, limit=TOP)
        report.meaning = report.meaning or page.meaning
        ids = [h.message_id for h in page.results]
        wanted = targets[case.target]
        rank = ids.index(wanted) + 1 if wanted in ids else None
        by_meaning = rank is not None and page.results[rank - 1].by_meaning
        report.results.append(Result(case, rank, by_meaning))
    return report
