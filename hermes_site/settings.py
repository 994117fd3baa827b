"""Django settings. Everything user-facing comes from HERMES_HOME/config.yaml via foundation.config."""

from __future__ import annotations

import functools
import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.functional import lazy

from foundation import config as hermes_config
from foundation.fileio import create_private

BASE_DIR = Path(__file__).resolve().parent.parent

# Only where the home is: config.yaml is read (and checked, by the system check that names a
# wrong key) once Django is set up, and again whenever it changes. Importing settings writes nothing.
HERMES_HOME = hermes_config.hermes_home()


@functools.cache
def _secret_key() -> str:
    """The home's signing key, created on first use (a session or CSRF cookie), one for every
    process of the home: the first to get there writes it, the others read that file."""
    path = HERMES_HOME / "secret_key"
    if not path.exists():
        HERMES_HOME.mkdir(mode=0o700, parents=True, exist_ok=True)
        create_private(path, secrets.token_urlsafe(50))  # 0600 from the start, never chmod-ed after
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = lazy(_secret_key, str)()
DEBUG = os.environ.get("HERMES_DEBUG", "") == "1"
# Only the loopback names: a page on another site that rebinds its DNS name to 127.0.0.1 still
# sends its own Host header and is refused (no DNS rebinding).
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Strict"
X_FRAME_OPTIONS = "DENY"
# Request bodies beyond this are refused with a clear error (imports have their own cap).
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "django_tasks",
    "django_tasks_db",
    "agent",
    "knowledge",
    "hermes_site",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "hermes_site.security.SecurityHeadersMiddleware",
    "hermes_site.security.RequestSizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "hermes_site.access.TokenAuthMiddleware",
    "hermes_site.config_django.ConfigRefreshMiddleware",  # a setting saved on any worker governs this request
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "hermes_site.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # hermes_site is not an app, so its template tags (the sanitising renderer) are named here.
            "libraries": {"hermes_tags": "hermes_site.templatetags.hermes_tags"},
        },
    },
]
ASGI_APPLICATION = "hermes_site.asgi.application"

# The embedded default: SQLite in HERMES_HOME. DATABASE_URL (postgres://user:pass@host:port/name)
# switches to PostgreSQL for a history of millions of messages or several server processes.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "hermes_site.sqlite",  # Django's, with this process's writers queueing in Python
            "NAME": os.environ.get("HERMES_DB") or str(HERMES_HOME / "dashboard.sqlite3"),
            "OPTIONS": {
                # WAL lets the browser, the terminal chat and review threads read while one writes;
                # the busy timeout makes contending writers wait instead of failing.
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                # Memory-mapped reads (up to SQLite's default maximum, 2 GiB - 64 KiB) keep the search
                # index in the OS page cache instead of a small private cache that one long scan can
                # flush; with a 64 MB page cache this made search over 1M messages 10-30% faster
                # (bench/search.py). The mapping costs address space, not memory.
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000; "
                    "PRAGMA cache_size=-65536; PRAGMA mmap_size=2147418112;"
                ),
            },
            # Connections persist per thread: chat turns, review threads and the consumers' database
            # calls (which close "old" connections around every call) would otherwise reconnect and
            # rerun the PRAGMAs above each time (~16% of the server's CPU per turn, bench/live.py).
            "CONN_MAX_AGE": None,
            # A file (not :memory:) so review threads and subprocesses see the same test database.
            "TEST": {"NAME": str(HERMES_HOME / "test_dashboard.sqlite3")},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# One process serves everything by default, so the in-memory layer is enough (the capacity leaves
# room for a fast-streaming turn mirrored to a second tab that reads a little behind). REDIS_URL
# (redis://host:port/db) makes toasts and streamed frames reach a browser on any worker process.
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py reads with a 5 s socket timeout by default, the same as channels_redis'
                # blocking receive (BZPOPMIN, 5 s): a busy server then loses the race and the socket
                # dies with "Timeout reading". Reads get room beyond the blocking wait.
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 10}],
                "capacity": 2000,
                "prefix": os.environ.get("HERMES_REDIS_PREFIX", "hermes"),
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 2000}}}

# Background jobs (reviews, end-of-session flushes, chat titles; agent/jobs.py): "threads" runs
# them on bounded pools inside the server process (the embedded default); "tasks" puts them on
# Django's task queue with its database backend (django-tasks + django-tasks-db), run by
# `manage.py learning_worker`, so they survive a server restart and can run on another machine.
# Any other value is a system check error (hermes_site.config_django).
HERMES_QUEUE = os.environ.get("HERMES_QUEUE", "threads")


def _seconds(name: str, default: str) -> float:
    raw = os.environ.get(name, default)
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < 86400:
        raise ImproperlyConfigured(f"{name} must be a number of seconds between 0 and 86400, got {raw!r}")
    return value


# How often every daphne worker and learning_worker says it is alive and takes up the work a
# process that died left (agent/reclaim.py): the longest a dead process's review or session end waits.
HERMES_RECLAIM_SECONDS = _seconds("HERMES_RECLAIM_SECONDS", "10")
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend"
        if HERMES_QUEUE == "tasks"
        else "django_tasks.backends.dummy.DummyBackend",
        "QUEUES": ["learning"],
    }
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("HERMES_LOG_LEVEL", "WARNING")},
}
