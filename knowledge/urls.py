"""Curation pages (memory, skills, search, changes, reviews, pending, overview, settings)."""

from typing import Any

urlpatterns: list[Any] = []
