"""Curation pages. Two URL modules so the pages can grow independently:
`urls_curation` (memory, skills, changes, reviews, pending) and `urls_tools` (search,
overview, settings, import/export)."""

from django.urls import include, path

urlpatterns = [
    path("", include("knowledge.urls_curation")),
    path("", include("knowledge.urls_tools")),
]
