"""config.yaml inside Django: the system checks that name a wrong key (and a wrong HERMES_QUEUE),
and the middleware that follows a changed file at the start of each request.

`foundation.config` stays free of Django (the terminal chat and the agent loop share it); this
module is its Django side. The check runs before `serve`, `migrate`, `learning_worker` and
`check`, so a wrong value stops start-up with one line naming the key instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core import checks
from django.http import HttpRequest, HttpResponse
from django_tasks.signals import task_started

from foundation import config as hermes_config
from hermes_site import memory_provider_checks, multi_worker_checks

CONFIG_ERROR = "hermes.E001"
QUEUE_ERROR = "hermes.E002"


def check_config(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The file as it is on disk now: an error naming the key when a value is wrong."""
    home = hermes_config.hermes_home()
    try:
        hermes_config.load(home)
    except hermes_config.ConfigError as exc:
        hint = f"Fix {exc.key or 'the file'} in {home / 'config.yaml'}; keys left out take their defaults."
        return [checks.Error(str(exc), hint=hint, obj=exc.key or "config.yaml", id=CONFIG_ERROR)]
    return []


def check_queue(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """HERMES_QUEUE names where background jobs run: this process's threads or the durable queue."""
    if settings.HERMES_QUEUE in ("threads", "tasks"):
        return []
    message = f"HERMES_QUEUE must be 'threads' or 'tasks', got {settings.HERMES_QUEUE!r}"
    return [checks.Error(message, obj="HERMES_QUEUE", id=QUEUE_ERROR)]


def _refresh_for_job(**kwargs: Any) -> None:
    hermes_config.refresh()


def register() -> None:
    checks.register(check_config)
    checks.register(check_queue)
    multi_worker_checks.register()  # hermes.W001-W003: what running past one process is missing
    memory_provider_checks.register()  # hermes.W004: a memory provider that cannot run here
    # Each job of the durable queue (`learning_worker`) starts with the settings as last saved.
    task_started.connect(_refresh_for_job, dispatch_uid="hermes-config-refresh")


class ConfigRefreshMiddleware:
    """Each request starts with the config as saved last, on this worker or any other (one stat)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        hermes_config.refresh()
        return self.get_response(request)
