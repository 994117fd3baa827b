"""The overview page: changes per day by origin, memory usage, most and never used skills."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from knowledge.memory.store import MemoryStore
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore

pytestmark = pytest.mark.django_db


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nSteps.\n"


def test_overview_numbers(auth_client, home: Path) -> None:
    mem = MemoryStore()
    mem.add("memory", "a" * 100, Provenance(actor="review"))
    mem.add("memory", "b" * 50, Provenance(actor="user"))
    mem.add("user", "Name: Ada", Provenance(actor="agent"))
    skills = SkillStore()
    for name in ("popular", "sometimes", "unused"):
        skills.create(name, skill_md(name, f"{name} skill"), prov=Provenance(actor="review"))
    for _ in range(3):
        skills.record_use("popular")
    skills.record_view("sometimes")
    old = KnowledgeChange.objects.filter(target="unused").first()
    assert old is not None
    KnowledgeChange.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=90))

    resp = auth_client.get("/overview/")
    assert resp.status_code == 200
    ctx = resp.context
    usage = {u["target"]: u for u in ctx["memory"]}
    assert (usage["memory"]["chars"], usage["memory"]["limit"]) == (153, 2200)  # 100 + "\n§\n" + 50
    assert (usage["user"]["chars"], usage["user"]["limit"]) == (9, 1375)
    memory_chart, skill_chart = ctx["charts"]
    assert memory_chart.total == 3 and skill_chart.total == 2  # the 90-day-old change is outside the window
    today = memory_chart.columns[-1]
    assert {s.actor: s.count for s in today.segments} == {"review": 1, "user": 1, "agent": 1}
    assert [r.info.name for r in ctx["most_used"]] == ["popular", "sometimes"]
    assert [r.info.name for r in ctx["never_used"]] == ["unused"]
    assert ctx["totals"]["review"] == 4

    body = resp.content.decode()
    assert "153/2200 chars" in body and "9/1375 chars" in body
    assert re.search(r'<meter min="0" max="2200"[^>]*value="153"', body)
    assert body.count('<rect class="bar actor-') == 4  # memory: 3 origins today; skills: 1
    assert "style=" not in body.split("<main", 1)[1]  # the CSP forbids inline styles


def test_overview_empty_home(auth_client, home: Path) -> None:
    body = auth_client.get("/overview/").content.decode()
    assert "Nothing changed in the last 30 days" in body and "No skill has been used yet" in body


def test_overview_hostile_skill_description_is_inert(auth_client, home: Path) -> None:
    hostile = '"<script>alert(1)</script><img src=x onerror=alert(2)> [x](javascript:alert(3))"'
    SkillStore().create("hostile", skill_md("hostile", hostile), prov=Provenance(actor="user"))
    SkillUsage.objects.filter(name="hostile").update(created_by="<b>x</b>")
    body = auth_client.get("/overview/").content.decode()
    assert "<script>alert" not in body and "<img" not in body and "<b>x</b>" not in body
    assert "&lt;script&gt;" in body
