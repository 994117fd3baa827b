"""The model's API key saved from the settings page: a file in the home, readable by its owner only.

The environment's key wins over it (foundation/config.py `Config.api_key`), as for every model
setting. The file is written as the login token and the cookie key are: created 0600 by the
system call that makes it (mkstemp), then moved into place, so it is never readable by others,
not even for a moment. A page shows a key by its last four characters only.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from foundation.config import API_KEY_FILE, Config
from foundation.fileio import atomic_write

SHOWN_CHARS = 4


def save(config: Config, key: str) -> None:
    atomic_write(config.home / API_KEY_FILE, key.strip() + "\n")  # mkstemp's private 0600 is kept


def remove(config: Config) -> bool:
    """Delete the saved key; False when there was none."""
    with contextlib.suppress(FileNotFoundError):
        (config.home / API_KEY_FILE).unlink()
        return True
    return False


def masked(key: str) -> str:
    """A key as a page may show it: its last four characters (nothing of a short one)."""
    return f"…{key[-SHOWN_CHARS:]}" if len(key) > 2 * SHOWN_CHARS else "…"


@dataclass(frozen=True)
class KeyStatus:
    """Which key the model calls use, and where it comes from."""

    source: str  # "env" | "file" | ""
    env_name: str  # the variable in use (source "env"), else the one that would win
    shown: str  # the key in use, masked
    saved_shown: str  # the key saved in the home, masked ("" if none)


def status(config: Config) -> KeyStatus:
    env_name = config.model.api_key_env or "OPENAI_API_KEY"
    saved = config.saved_api_key
    for name in dict.fromkeys([env_name, "OPENAI_API_KEY"]):
        if os.environ.get(name):
            return KeyStatus("env", name, masked(os.environ[name]), masked(saved) if saved else "")
    if saved:
        return KeyStatus("file", env_name, masked(saved), masked(saved))
    return KeyStatus("", env_name, "", "")
