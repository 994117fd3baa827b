"""The system checks of running past one process say what is missing: Redis named but the
in-memory layer in use, several servers without Redis, a durable queue no learning_worker
serves, processes on another HERMES_HOME — each a warning with a hint, through `manage.py check`."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core import checks
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from hermes_site.multi_worker_checks import IN_MEMORY_LAYER, OTHER_HOME, QUEUE_WITHOUT_WORKER
from knowledge.history import presence
from knowledge.history.presence import WorkerProcess
from tests.knowledge.history.test_turns import _dead_worker

pytestmark = pytest.mark.django_db

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
ON_REDIS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": ["redis://x:1/0"]}}}
MULTI = (IN_MEMORY_LAYER, QUEUE_WITHOUT_WORKER, OTHER_HOME)


def _warnings(*, databases: bool = True) -> list[checks.CheckMessage]:
    found = checks.run_checks(databases=["default"] if databases else None)
    return [m for m in found if m.id in MULTI]


def _worker(worker: str, kind: str = presence.SERVER, home: str | None = None, ago: float = 0) -> None:
    seen = timezone.now() - timedelta(seconds=ago)
    home = home or presence.this_home()
    WorkerProcess.objects.create(worker=worker, kind=kind, home=home, started_at=seen, seen_at=seen)


def test_the_embedded_default_has_nothing_to_warn_about():
    with override_settings(CHANNEL_LAYERS=IN_MEMORY, REDIS_URL="", HERMES_QUEUE="threads"):
        presence.beat(presence.SERVER)  # one server alone
        assert _warnings() == []


def test_redis_set_but_the_in_memory_layer_in_use_is_a_warning():
    with override_settings(CHANNEL_LAYERS=IN_MEMORY, REDIS_URL="redis://127.0.0.1:6379/0"):
        (warning,) = _warnings(databases=False)
    assert warning.id == IN_MEMORY_LAYER and not warning.is_serious()
    assert warning.msg.startswith("REDIS_URL is set, but the channel layer in use is the in-memory one")
    assert "CHANNEL_LAYERS" in (warning.hint or "")


def test_a_durable_queue_with_the_in_memory_layer_warns_that_its_toasts_reach_no_page():
    with override_settings(CHANNEL_LAYERS=IN_MEMORY, REDIS_URL="", HERMES_QUEUE="tasks"):
        presence.beat(presence.LEARNING)
        (warning,) = _warnings()
    assert warning.id == IN_MEMORY_LAYER
    assert "reviews run by a learning_worker never toast (💾) an open page" in warning.msg
    assert "REDIS_URL=redis://" in (warning.hint or "")


def test_two_servers_on_one_database_without_redis_is_a_warning_naming_them():
    presence.beat(presence.SERVER)
    _worker("other-host:4242")
    with override_settings(CHANNEL_LAYERS=IN_MEMORY, REDIS_URL=""):
        (warning,) = _warnings()
        assert _warnings(databases=False) == []  # a database check: `check --database default`
    assert warning.id == IN_MEMORY_LAYER
    assert warning.msg.startswith("2 daphne workers serve this database (")
    assert "other-host:4242" in warning.msg and "never reaches a tab on another" in warning.msg
    with override_settings(CHANNEL_LAYERS=ON_REDIS, REDIS_URL="redis://x:1/0"):
        assert _warnings() == []


def test_a_durable_queue_no_learning_worker_serves_is_a_warning_until_one_says_it_is_alive():
    out = StringIO()
    with override_settings(CHANNEL_LAYERS=ON_REDIS, REDIS_URL="redis://x:1/0", HERMES_QUEUE="tasks"):
        _worker(_dead_worker(), kind=presence.LEARNING)  # killed: its row does not count
        _worker("other-host:7", kind=presence.LEARNING, ago=3600)  # not seen for an hour
        call_command("check", "--database", "default", stderr=out, stdout=StringIO())
        assert (
            f"{QUEUE_WITHOUT_WORKER}) HERMES_QUEUE=tasks, but no learning_worker has been seen alive" in out.getvalue()
        )
        assert "HINT: Start `manage.py learning_worker`" in out.getvalue()
        _worker("other-host:8", kind=presence.LEARNING, ago=5)
        assert _warnings() == []


def test_processes_on_another_home_are_a_warning_naming_each():
    _worker("other-host:9", kind=presence.LEARNING, home="/srv/elsewhere")
    _worker("other-host:10", kind=presence.SERVER)
    with override_settings(CHANNEL_LAYERS=ON_REDIS, REDIS_URL="redis://x:1/0"):
        (warning,) = _warnings()
    assert warning.id == OTHER_HOME
    assert warning.msg == (
        f"Processes sharing this database use another HERMES_HOME than {presence.this_home()}: "
        "learning_worker other-host:9 on /srv/elsewhere."
    )
    assert "needs the same HERMES_HOME" in (warning.hint or "")
