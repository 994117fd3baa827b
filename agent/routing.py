"""Websocket routes (filled in by the browser chat)."""

from typing import Any

websocket_urlpatterns: list[Any] = []
