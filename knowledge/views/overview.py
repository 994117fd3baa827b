"""Overview: what was learned over time, memory usage, most and never used skills.

The chart is an inline SVG built here (no JavaScript charting, no inline styles: colours
come from CSS classes per origin), with the same numbers in a table for screen readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from knowledge.memory.store import TARGETS, MemoryStore
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.skills.store import SkillInfo, SkillStore

DAYS = 30
CHART_HEIGHT = 120
BAR_WIDTH = 14
BAR_GAP = 4
ACTOR_LABELS = dict(KnowledgeChange.ACTORS)


@dataclass
class Segment:
    actor: str
    label: str
    count: int
    y: float
    height: float


@dataclass
class Column:
    day: date
    x: int
    total: int = 0
    segments: list[Segment] = field(default_factory=list)


@dataclass
class Chart:
    kind: str
    title: str
    columns: list[Column]
    actors: list[tuple[str, str]]
    total: int
    width: int
    height: int = CHART_HEIGHT


def _chart(kind: str, title: str, start: date, days: int) -> Chart:
    rows = (
        KnowledgeChange.objects.filter(kind=kind, created_at__date__gte=start)
        .annotate(day=TruncDate("created_at"))
        .values("day", "actor")
        .annotate(n=Count("id"))
    )
    counts: dict[date, dict[str, int]] = {}
    for row in rows:
        counts.setdefault(row["day"], {})[row["actor"]] = row["n"]
    actors = [a for a, _ in KnowledgeChange.ACTORS if any(a in c for c in counts.values())]
    peak = max((sum(c.values()) for c in counts.values()), default=0)
    columns = []
    for i in range(days):
        day = start + timedelta(days=i)
        col = Column(day=day, x=i * (BAR_WIDTH + BAR_GAP))
        y = float(CHART_HEIGHT)
        for actor in actors:  # stacked bottom-up in a fixed order so colours line up by day
            n = counts.get(day, {}).get(actor, 0)
            if n:
                h = CHART_HEIGHT * n / peak
                y -= h
                col.segments.append(Segment(actor, ACTOR_LABELS[actor], n, round(y, 2), round(h, 2)))
                col.total += n
        columns.append(col)
    total = sum(c.total for c in columns)
    legend = [(a, ACTOR_LABELS[a]) for a in actors]
    return Chart(kind, title, columns, legend, total, width=days * (BAR_WIDTH + BAR_GAP))


def _memory_usage() -> list[dict[str, Any]]:
    store = MemoryStore()
    usage = []
    for target, spec in TARGETS.items():
        chars, limit = store.usage(target)
        usage.append(
            {
                "target": target,
                "label": spec.label,
                "file": spec.filename,
                "chars": chars,
                "limit": limit,
                "low": int(limit * 0.8),
                "entries": len(store.entries(target)),
                "percent": (100 * chars) // limit if limit else 0,
            }
        )
    return usage


@dataclass
class SkillRow:
    info: SkillInfo
    usage: SkillUsage | None


def _skill_usage() -> tuple[list[SkillRow], list[SkillRow]]:
    stats = {u.name: u for u in SkillUsage.objects.all()}
    most: list[tuple[SkillUsage, SkillRow]] = []
    never: list[SkillRow] = []
    for info in SkillStore().list():
        u = stats.get(info.name)
        if u is None or (u.uses == 0 and u.views == 0):
            never.append(SkillRow(info, u))
        else:
            most.append((u, SkillRow(info, u)))
    most.sort(key=lambda pair: (-pair[0].uses, -pair[0].views, pair[1].info.name))
    return [row for _, row in most[:10]], never


@require_GET
def overview_page(request: HttpRequest) -> HttpResponse:
    start = timezone.localdate() - timedelta(days=DAYS - 1)
    charts = [_chart("memory", "Memory changes", start, DAYS), _chart("skill", "Skill changes", start, DAYS)]
    totals = {
        ACTOR_LABELS.get(r["actor"], r["actor"]): r["n"]
        for r in KnowledgeChange.objects.values("actor").annotate(n=Count("id")).order_by("-n")
    }
    most, never = _skill_usage()
    ctx = {
        "nav": "overview",
        "charts": charts,
        "days": DAYS,
        "start": start,
        "actor_labels": ACTOR_LABELS,
        "totals": totals,
        "memory": _memory_usage(),
        "most_used": most,
        "never_used": never,
    }
    return render(request, "knowledge/overview.html", ctx)
