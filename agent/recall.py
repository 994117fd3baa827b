"""Recall by meaning, the agent's side: the embedding model's client, and the background work that
embeds past messages and memory entries (docs/DECISIONS.md, record 24).

`embeddings.model` in config.yaml names the model (on the chat's server unless
`embeddings.base_url` names another). Without one, or when the server has no embeddings (learned
from its answer and remembered like the chat model's capabilities), search is by words only.

The work runs in the background only — never on a chat's turn: each process's periodic round
(agent/reclaim.py) starts it on a thread of its own when none runs here, and a lease on the
model's progress row makes sure one process embeds at a time. It takes the messages in id order
from a high-water mark, BATCH at a time, so it resumes where it stopped; it waits while a chat
is writing an answer (that row still changes, and the turn has the machine); it never embeds a
private chat, and removes the vectors of a chat made private. A new model starts from the first
message; the old model's vectors are then removed.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agent import jobs
from agent.llm import ChatClient, LLMError
from agent.llm.probe import ProbeStep
from foundation import config as hermes_config
from foundation.config import Config
from knowledge.capabilities import DbCapabilityStore, known
from knowledge.history.workers import this_worker
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message
from knowledge.search import meaning, nearest_postgres
from knowledge.vectors import EntryVector, MessageVector, RecallProgress, pack

log = logging.getLogger(__name__)

BATCH = 32  # texts per request (agent/llm/embeddings.py EMBED_BATCH): one request per batch
MAX_CHARS = 2000  # of a message sent to be embedded: small models read its first 256–512 tokens anyway
LEASE = timedelta(minutes=2)  # a round holds the work this long, renewed each batch
# Held while pgvector's index is built (minutes at a million messages): no other process starts a
# second build meanwhile; one that died leaves the lease to run out and the next round rebuilds.
INDEX_LEASE = timedelta(hours=1)
ROUND_BATCHES = 200  # batches in one round at most; the next round goes on
QUERY_TIMEOUT = 5.0  # seconds a search waits for its query's embedding before answering by words
DELETE_BATCH = 2000  # vectors of an old model or a private chat removed per statement
# Seconds between batches. The work shares the process with the chat (the embedded default runs
# it on a thread of the server): reading a batch's answer holds the interpreter for a few
# milliseconds, which a turn starting meanwhile would wait for; resting between batches keeps
# that rare (bench/recall.py: 0.1 s cost a turn 1.87x on a busy machine, 0.5 s 1.15x). About 58
# messages a second at a fast server: 48,000 in 14 minutes, a million in five hours, once.
BATCH_PAUSE = 0.5


@dataclass(frozen=True)
class Target:
    """Where embeddings come from, as configured."""

    model: str
    base_url: str
    api_key: str

    @property
    def space(self) -> str:
        """The vectors' name: a model on a server (the same name elsewhere may be another model)."""
        return f"{self.model} @ {self.base_url or 'api.openai.com'}"[:200]


def target(config: Config) -> Target | None:
    model = config.embedding_model
    return Target(model, config.embedding_base_url, config.embedding_api_key) if model else None


def _new_client(t: Target, timeout: float, retries: int) -> ChatClient:
    return ChatClient(
        base_url=t.base_url,
        api_key=t.api_key,
        model=t.model,
        timeout=timeout,
        max_retries=retries,
        capabilities=DbCapabilityStore(),
    )


@lru_cache(maxsize=4)
def _query_client(t: Target) -> ChatClient:
    # Kept per server + model + key, with its connection pool: one per search would connect anew.
    # A query is not retried: the words answer instead.
    return _new_client(t, QUERY_TIMEOUT, 0)


def serves(t: Target) -> bool | None:
    """Whether the server embeds with this model, as every process has learned it (None: not known yet)."""
    found = (known(t.base_url, t.model) or {}).get("embeddings")
    return found if isinstance(found, bool) else None


def embedder() -> meaning.Embedder:
    """How a search embeds its query now (registered with knowledge.search.meaning at start-up)."""
    t = target(hermes_config.get())
    if t is None:
        return meaning.WORDS_ONLY
    learned = serves(t)
    if learned is False:
        return meaning.Embedder("", f"the server has no embeddings for the model {t.model}")
    c = _query_client(t)
    c.caps.embeddings = learned  # what any process learned since, or a check found out anew
    return meaning.Embedder(t.space, "", c.embed)


def check(config: Config, api_key: str, timeout: float) -> ProbeStep | None:
    """The connection check's step for embeddings (agent/chat/connection.py): asked anew, whatever
    was learned before, and remembered; None when no embedding model is set. `api_key`: the
    chat's key as the form has it, used when the embeddings have no server or key of their own."""
    t = target(config)
    if t is None:
        return None
    own = bool(config.embeddings.base_url or config.embeddings.api_key_env)
    c = ChatClient(
        base_url=t.base_url,
        api_key=t.api_key if own else api_key,
        model=t.model,
        timeout=timeout,
        capabilities=DbCapabilityStore(),
    )
    c.caps.embeddings = None  # a check asks again: the server may have gained them
    label = f"Embeddings ({t.model})"
    try:
        found = c.embed(["connection check"])
    except LLMError as exc:
        return ProbeStep("embeddings", label, None, exc.message)
    finally:
        c.close()
    if found is None:
        return ProbeStep("embeddings", label, False, "search is by words only")
    return ProbeStep("embeddings", label, True, f"{len(found[0])} dimensions: past chats are found by meaning too")


# -- the background work --------------------------------------------------------------------------


def _claim(space: str, me: str, now: datetime) -> RecallProgress | None:
    RecallProgress.objects.get_or_create(model=space)
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(worker=me)
    if not RecallProgress.objects.filter(free, model=space).update(worker=me, lease_until=now + LEASE):
        return None  # another process embeds
    return RecallProgress.objects.get(model=space)


def _release(space: str, me: str) -> None:
    RecallProgress.objects.filter(model=space, worker=me).update(worker="", lease_until=None)


def _answering(now: datetime) -> bool:
    """A chat is writing an answer (a live turn lease), on any process."""
    return ChatSession.objects.filter(turn_lease_until__gt=now).exists()


def _tidy(space: str) -> int:
    """Remove vectors no search may use: a private chat's, and another model's. Each query starts
    from the few rows that can have them (the private chats' index, the other models' progress
    rows), never from a scan of every vector."""
    stale = [MessageVector.objects.filter(message__session__in=ChatSession.objects.filter(private=True))]
    others = list(RecallProgress.objects.exclude(model=space).values_list("model", flat=True))
    stale += [MessageVector.objects.filter(model=other) for other in others]
    removed = 0
    for query in stale:
        ids = list(query.values_list("message_id", flat=True)[:DELETE_BATCH])
        if ids:
            removed += MessageVector.objects.filter(message_id__in=ids).delete()[0]
    for other in others:  # every vector of that model gone: its progress too
        if not MessageVector.objects.filter(model=other).exists():
            RecallProgress.objects.filter(model=other).delete()
    return removed


def _eligible(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _batch(after: int, now: datetime) -> tuple[list[tuple[int, str]], int]:
    """The next messages to embed after id `after`, and the id the mark may move to: up to the
    first message of a chat writing an answer now (it is taken when that turn ends)."""
    rows = list(
        Message.objects.filter(id__gt=after)
        .order_by("id")
        .values_list("id", "role", "content", "session__private", "session__turn_lease_until")[:BATCH]
    )
    todo: list[tuple[int, str]] = []
    mark = after
    for mid, role, content, private, lease_until in rows:
        if lease_until is not None and lease_until > now:
            break
        mark = mid
        if role in meaning.ROLES and not private and _eligible(content):
            todo.append((mid, content[:MAX_CHARS]))
    return todo, mark


@dataclass
class RoundResult:
    embedded: int = 0
    entries: int = 0
    waited: bool = False  # stopped because a chat was answering
    error: str = ""


def embed_backlog(
    config: Config | None = None,
    *,
    max_batches: int = ROUND_BATCHES,
    now: datetime | None = None,
    pause: float = BATCH_PAUSE,
) -> RoundResult:
    """One round of the background work (see the module's doc). `now`: for tests' clocks;
    `pause`: seconds between batches."""
    config = config or hermes_config.get()
    t = target(config)
    if t is None or serves(t) is False:
        return RoundResult()
    c = _new_client(t, config.model.timeout, config.model.max_retries)  # learns with every process
    try:
        return _round(c, t, config, max_batches, now, pause)
    finally:
        c.close()


def _round(
    c: ChatClient, t: Target, config: Config, max_batches: int, now: datetime | None, pause: float
) -> RoundResult:
    out = RoundResult()
    space, me = t.space, this_worker()
    at = now or timezone.now()
    progress = _claim(space, me, at)
    if progress is None:
        return out
    try:
        _tidy(space)
        mark = progress.high_water
        for _ in range(max_batches):
            at = now or timezone.now()
            if _answering(at):
                out.waited = True
                break
            todo, new_mark = _batch(mark, at)
            if new_mark == mark:
                break  # nothing new (or the next message is an answer being written)
            vectors = c.embed([text for _, text in todo]) if todo else []
            if vectors is None:
                out.error = f"the server has no embeddings for the model {t.model}"
                break
            _store(space, me, todo, vectors, new_mark, at)
            out.embedded += len(todo)
            mark = new_mark
            time.sleep(pause)  # a share of the process for a chat that may start meanwhile
        else:
            return out  # the round's share is done; the next round goes on
        if not out.waited and not out.error:
            out.entries = _embed_entries(c, space, config)
            RecallProgress.objects.filter(model=space, worker=me).update(lease_until=timezone.now() + INDEX_LEASE)
            nearest_postgres.prepare(space)  # the backlog done: PostgreSQL's own index, where pgvector is
    except LLMError as exc:
        out.error = exc.message
        log.warning("embedding past messages stopped (tried again next round): %s", exc.message)
    finally:
        RecallProgress.objects.filter(model=space).update(error=out.error)
        _release(space, me)
    return out


def _store(
    space: str, me: str, todo: list[tuple[int, str]], vectors: list[list[float]], mark: int, at: datetime
) -> None:
    rows = [
        MessageVector(message_id=mid, model=space, vector=pack(v)) for (mid, _), v in zip(todo, vectors, strict=True)
    ]
    with transaction.atomic():
        # A message deleted meanwhile is skipped by the filter (its vector would have no row).
        alive = set(Message.objects.filter(id__in=[r.message_id for r in rows]).values_list("id", flat=True))
        MessageVector.objects.bulk_create(
            [r for r in rows if r.message_id in alive],
            update_conflicts=True,
            unique_fields=["message"],
            update_fields=["model", "vector"],
        )
        nearest_postgres.write([(mid, v) for (mid, _), v in zip(todo, vectors, strict=True) if mid in alive])
        progress = RecallProgress.objects.select_for_update().get(model=space)
        progress.high_water = mark
        progress.embedded += len(alive)
        progress.lease_until = at + LEASE
        progress.worker = me
        progress.save(update_fields=["high_water", "embedded", "lease_until", "worker", "updated_at"])


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _embed_entries(c: ChatClient, space: str, config: Config) -> int:
    """The memory entries (MEMORY.md, USER.md) not embedded yet by this model."""
    store = MemoryStore(config)
    texts = {digest(e): e for target_name in store.enabled_targets() for e in store.entries(target_name)}
    have = set(EntryVector.objects.filter(model=space, digest__in=list(texts)).values_list("digest", flat=True))
    missing = [(d, text) for d, text in texts.items() if d not in have]
    if not missing:
        return 0
    vectors = c.embed([text[:MAX_CHARS] for _, text in missing])
    if vectors is None:
        return 0
    EntryVector.objects.bulk_create(
        [EntryVector(model=space, digest=d, vector=pack(v)) for (d, _), v in zip(missing, vectors, strict=True)],
        ignore_conflicts=True,
    )
    EntryVector.objects.exclude(model=space).delete()
    return len(missing)


_running = threading.Lock()


def run_round() -> RoundResult | None:
    """One round, unless one runs in this process already (None then)."""
    if not _running.acquire(blocking=False):
        return None
    try:
        return embed_backlog()
    finally:
        _running.release()


def kick() -> None:
    """Start a round on this process's recall thread, unless one runs (the periodic round calls
    this: agent/reclaim.py). A process whose jobs go on the durable queue leaves it to the
    `learning_worker`s, so no page-serving process embeds."""
    if _running.locked() or target(hermes_config.get()) is None:
        return
    jobs.run_here("recall", run_round)
