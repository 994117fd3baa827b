"""System checks for running past one process: what is missing or mismatched when several daphne
workers, `learning_worker`s and terminals share one database. Warnings, not errors: each
process still works on its own, but a person would notice (a tab that never gets the answer, a
review that never runs, knowledge written into another home).

- hermes.W001: the in-memory channel layer while REDIS_URL is set, while jobs go to the durable
  queue, or while other daphne workers serve this database: streamed answers, Stop and 💾
  toasts stay inside the process that made them.
- hermes.W002: the durable queue (HERMES_QUEUE=tasks) with no `learning_worker` seen alive
  lately: reviews, "New chat" flushes and titles wait on the queue.
- hermes.W003: processes serving this database on another HERMES_HOME: they keep other memory
  files, skills, login token and signing key.

The last two (and W001's count of workers) read the workers table (knowledge/history/presence.py),
so they are database checks: `manage.py check --database default` runs them (as `migrate` does).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import checks
from django.db import DatabaseError

from knowledge.history import presence
from knowledge.history.presence import WorkerProcess
from knowledge.history.workers import this_worker

IN_MEMORY_LAYER = "hermes.W001"
QUEUE_WITHOUT_WORKER = "hermes.W002"
OTHER_HOME = "hermes.W003"

_IN_MEMORY = "channels.layers.InMemoryChannelLayer"
_SET_REDIS = (
    "Set REDIS_URL=redis://host:port/db (and the same HERMES_REDIS_PREFIX) for every daphne worker and learning_worker."
)


def recent() -> timedelta:
    """How long ago a process must have said it is alive to count: three of its rounds, at least a minute."""
    return timedelta(seconds=max(60.0, 3 * float(settings.HERMES_RECLAIM_SECONDS)))


def _in_memory() -> bool:
    return str(settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", "")) == _IN_MEMORY


def check_channel_layer(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Settings alone: Redis named but not used, or queue workers whose toasts cannot reach a page."""
    if not _in_memory():
        return []
    if getattr(settings, "REDIS_URL", ""):
        msg = "REDIS_URL is set, but the channel layer in use is the in-memory one (CHANNEL_LAYERS was replaced)."
        hint = "Leave CHANNEL_LAYERS as hermes_site/settings.py builds it from REDIS_URL, so every worker shares Redis."
        return [checks.Warning(msg, hint=hint, obj="CHANNEL_LAYERS", id=IN_MEMORY_LAYER)]
    if settings.HERMES_QUEUE == "tasks":
        msg = (
            "HERMES_QUEUE=tasks with the in-memory channel layer: reviews run by a learning_worker "
            "never toast (💾) an open page; it shows what was learned only after a reload."
        )
        return [checks.Warning(msg, hint=_SET_REDIS, obj="REDIS_URL", id=IN_MEMORY_LAYER)]
    return []


def check_workers(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The workers table: servers beside an in-memory layer, a queue nobody serves, other homes."""
    if not databases:
        return []
    try:
        alive = presence.alive(recent())
    except DatabaseError:  # not migrated yet: no process has said anything
        return []
    return [*_servers_without_redis(alive), *_queue_without_worker(alive), *_other_homes(alive)]


def _servers_without_redis(alive: list[WorkerProcess]) -> list[checks.CheckMessage]:
    servers = [row.worker for row in alive if row.kind == presence.SERVER]
    if not _in_memory() or len(servers) < 2:
        return []
    msg = (
        f"{len(servers)} daphne workers serve this database ({', '.join(servers)}), but the channel layer is "
        "the in-memory one: an answer streamed by one never reaches a tab on another, nor does Stop or a 💾 toast."
    )
    return [checks.Warning(msg, hint=_SET_REDIS, obj="REDIS_URL", id=IN_MEMORY_LAYER)]


def _queue_without_worker(alive: list[WorkerProcess]) -> list[checks.CheckMessage]:
    if settings.HERMES_QUEUE != "tasks" or any(row.kind == presence.LEARNING for row in alive):
        return []
    seconds = int(recent().total_seconds())
    msg = (
        f"HERMES_QUEUE=tasks, but no learning_worker has been seen alive in the last {seconds} s: reviews, "
        "the memory flush of 'New chat' and chat titles wait on the queue until one runs."
    )
    hint = (
        "Start `manage.py learning_worker` (as many as you like) with the same environment as the servers, "
        "or set HERMES_QUEUE=threads to run these jobs inside the servers."
    )
    return [checks.Warning(msg, hint=hint, obj="HERMES_QUEUE", id=QUEUE_WITHOUT_WORKER)]


def _other_homes(alive: list[WorkerProcess]) -> list[checks.CheckMessage]:
    home = presence.this_home()
    others = [row for row in alive if row.home != home and row.worker != this_worker()]
    if not others:
        return []
    listed = "; ".join(f"{row.get_kind_display()} {row.worker} on {row.home}" for row in others)
    msg = f"Processes sharing this database use another HERMES_HOME than {home}: {listed}."
    hint = (
        "Every daphne worker, learning_worker and terminal chat of one dashboard needs the same HERMES_HOME "
        "(memory files, skills, the login token and the signing key live there): set it the same everywhere."
    )
    return [checks.Warning(msg, hint=hint, obj="HERMES_HOME", id=OTHER_HOME)]


def register() -> None:
    checks.register(check_channel_layer)
    checks.register(check_workers, checks.Tags.database)
