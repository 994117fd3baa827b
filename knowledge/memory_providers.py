"""How each external memory provider is doing, for the settings page (docs/BEHAVIOUR.md, Memory
providers).

The agent's provider manager (agent/learning/providers.py) records here what each call of a
provider came to: answered (and, for a turn given to it, when), failed with its error, or no
answer within the time budget. The record is a small JSON file in HERMES_HOME, so the page shows
it whichever server process ran the turn. Each kind of call (sync_turn, prefetch, …) keeps its
latest outcome; the state shown is the worst of them, with their errors.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from foundation import config as hermes_config
from foundation.config import Config
from foundation.fileio import atomic_write
from knowledge import mem0_store

log = logging.getLogger(__name__)

STATUS_FILE = "memory-providers.json"
OK, FAILING, SLOW, NOT_YET, UNAVAILABLE = "ok", "failing", "slow", "not used yet", "unavailable"
DESCRIPTIONS = {
    "session_recall": "recalls matching past chats from this dashboard's own search",
    "mem0": "mem0, run locally: its model and embeddings on your server, its store in the home",
}

_lock = threading.Lock()


@dataclass(frozen=True)
class ProviderState:
    name: str
    description: str
    state: str
    error: str = ""
    last_sync: datetime | None = None
    at: datetime | None = None  # when the state was recorded

    @property
    def ok(self) -> bool:
        return self.state == OK


def configured_names(config: Config) -> list[str]:
    return [n.strip() for n in config.memory.provider.split(",") if n.strip()]


def _path(home: Path) -> Path:
    return home / STATUS_FILE


def _read(home: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_path(home).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # a torn or hand-edited file: start it again
        log.warning("%s could not be read (%s); provider states start afresh", _path(home), exc)
        return {}
    return data if isinstance(data, dict) else {}


def _write(home: Path, data: dict[str, dict[str, Any]]) -> None:
    atomic_write(_path(home), json.dumps(data, indent=1))


def record(
    name: str, what: str, state: str, *, error: str = "", synced: bool = False, home: Path | None = None
) -> None:
    """Note the outcome of a provider's call (`what`: sync_turn, prefetch, …); `synced`: a turn
    given to it, whose time is kept. Each kind of call keeps its own latest outcome, so a sync that
    keeps failing is not hidden by the prefetches that work."""
    home = home or hermes_config.hermes_home()
    with _lock:
        data = _read(home)
        entry = data.get(name, {})
        found = entry.get("calls")
        calls: dict[str, Any] = found if isinstance(found, dict) else {}
        before = calls.get(what) or {}
        if not synced and (before.get("state"), before.get("error")) == (state, error):
            return  # nothing new to show (whichever process wrote it): spare the file a write per call
        now = datetime.now(UTC).isoformat()
        calls[what] = {"state": state, "error": error, "at": now}
        entry = {**entry, "calls": calls}
        if synced:
            entry["last_sync"] = now
        data[name] = entry
        try:
            _write(home, data)
        except OSError as exc:
            log.warning("the state of memory provider %s could not be written: %s", name, exc)


def forget(home: Path | None = None) -> None:
    """Drop every recorded state (a home emptied by a test, or a reset)."""
    home = home or hermes_config.hermes_home()
    with _lock:
        _path(home).unlink(missing_ok=True)


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def unavailable(name: str, config: Config) -> str:
    """Why a configured provider cannot run, or ""."""
    if name == "mem0":
        return mem0_store.unavailable(config)
    if name not in DESCRIPTIONS:
        return "the dashboard has no provider of this name"
    return ""


def states(config: Config | None = None) -> list[ProviderState]:
    """The configured providers, each with what its calls came to lately."""
    config = config or hermes_config.get()
    data = _read(config.home)
    out = []
    for name in configured_names(config):
        seen = data.get(name, {})
        calls = [c for c in (seen.get("calls") or {}).values() if isinstance(c, dict)]
        why = unavailable(name, config)
        # The worst of each kind of call's latest outcome; the errors of those that are not ok.
        worst = [c for c in calls if c.get("state") == FAILING] or [c for c in calls if c.get("state") == SLOW]
        state = UNAVAILABLE if why else str(worst[0]["state"]) if worst else OK if calls else NOT_YET
        out.append(
            ProviderState(
                name=name,
                description=DESCRIPTIONS.get(name, ""),
                state=state,
                error=why or "; ".join(str(c.get("error") or "") for c in worst),
                last_sync=_when(seen.get("last_sync")),
                at=max((t for c in worst if (t := _when(c.get("at"))) is not None), default=None),
            )
        )
    return out
