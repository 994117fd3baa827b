"""Where background jobs run: the one place that decides (docs/DECISIONS.md, record 10).

A job is a django-tasks `Task` whose arguments are ids only, so it can be run later by another
process. With HERMES_QUEUE=threads (the embedded default) it runs on a bounded thread pool of
this process, one pool per kind of job so a burst of reviews never delays a session end; with
HERMES_QUEUE=tasks it is put on the durable queue (the django-tasks database backend) once the
current transaction commits, and `manage.py learning_worker` runs it.

Each job guards itself against running twice (a claim on its record), because the queue may
deliver it again after a worker is killed and restarted.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction
from django_tasks.base import Task

from foundation import config as hermes_config

log = logging.getLogger(__name__)

# Threads per kind of job on the embedded default. Reviews and session ends are model calls that
# can take a while; titles are one short completion.
POOL_SIZES = {"review": 4, "session-end": 2, "title": 2, "recall": 1}

_pools: dict[str, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def durable() -> bool:
    """True when background jobs go on the durable queue rather than this process's threads."""
    return settings.HERMES_QUEUE == "tasks"


def _pool(kind: str) -> ThreadPoolExecutor:
    with _pools_lock:
        if kind not in _pools:
            _pools[kind] = ThreadPoolExecutor(max_workers=POOL_SIZES[kind], thread_name_prefix=f"bg-{kind}")
        return _pools[kind]


def start(task: Task[Any, Any], *args: Any, kind: str, here: Callable[[], Any] | None = None) -> Future[Any] | None:
    """Run `task(*args)` in the background. Returns the thread's future, or None when the job
    went on the durable queue.

    `here`: what to run on a thread instead of the task itself, when the caller holds something
    a thread of this process can reuse (the live conversation of a review); it must do what the
    task does.
    """
    if kind not in POOL_SIZES:
        raise ValueError(f"unknown kind of background job {kind!r}; known: {', '.join(POOL_SIZES)}")
    if durable():
        # After commit: the worker must find the records the job's ids name.
        transaction.on_commit(partial(task.enqueue, *args))
        return None
    future = _pool(kind).submit(_run, here or partial(task.call, *args))
    future.add_done_callback(partial(_report_crash, task.name))
    return future


def run_here(kind: str, job: Callable[[], Any]) -> Future[Any]:
    """Run `job` on this process's pool of `kind` whatever the queue: work every process shares out
    by itself through a claim in the database (the embedding of past messages, agent/recall.py)."""
    future = _pool(kind).submit(_run, job)
    future.add_done_callback(partial(_report_crash, kind))
    return future


def _run(job: Callable[[], Any]) -> Any:
    hermes_config.refresh()  # a job starts with the settings as last saved (the queue's worker: config_django)
    try:
        return job()
    finally:
        close_old_connections()  # each pool thread keeps no connection past its job


def _report_crash(name: str, future: Future[Any]) -> None:
    """Jobs record their own failures; anything escaping one is a bug worth a traceback."""
    exc = future.exception()
    if exc is not None:
        log.error("background job %s crashed", name, exc_info=exc)
