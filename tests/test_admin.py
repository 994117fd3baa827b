"""The Django admin: every database model is registered and its pages load for the owner."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin

from knowledge.models import ChatSession, KnowledgeChange, Message, PendingWrite, ReviewRun, SkillUsage
from knowledge.provenance import Provenance

pytestmark = pytest.mark.django_db

PROJECT_MODELS = [ChatSession, Message, ReviewRun, KnowledgeChange, PendingWrite, SkillUsage]


def _sample_rows() -> None:
    s = ChatSession.objects.create(title="<script>alert(1)</script>")
    Message.objects.create(session=s, role="user", content="<img src=x onerror=alert(1)>")
    run = ReviewRun.objects.create(session=s, prompt_kind="memory", summary="Memory updated")
    KnowledgeChange.objects.create(kind="memory", target="memory", action="add", actor="review", session=s, review=run)
    PendingWrite.objects.create(kind="memory", tool_name="memory", arguments={"action": "add"}, session=s, review=run)
    SkillUsage.objects.create(name="x", uses=2, created_by=Provenance().actor)


def test_every_project_model_is_registered() -> None:
    for app in ("agent", "knowledge"):
        for model in apps.get_app_config(app).get_models():
            assert admin.site.is_registered(model), model


@pytest.mark.parametrize("model", PROJECT_MODELS, ids=lambda m: m.__name__)
def test_changelist_and_change_pages_load(auth_client, model) -> None:
    _sample_rows()
    meta = model._meta
    url = f"/admin/{meta.app_label}/{meta.model_name}/"
    resp = auth_client.get(url)
    assert resp.status_code == 200
    assert "<script>alert" not in resp.content.decode()
    ma = admin.site._registry[model]
    if ma.search_fields:
        assert auth_client.get(url, {"q": "alert"}).status_code == 200
    obj = model.objects.first()
    assert auth_client.get(f"{url}{obj.pk}/change/").status_code == 200


def test_admin_requires_login(client, db) -> None:
    assert client.get("/admin/knowledge/message/").status_code == 302


def _listed(resp) -> str:
    return resp.content.decode()


def test_message_search_uses_the_full_text_index(auth_client) -> None:
    s = ChatSession.objects.create(title="Deploy chat")
    other = ChatSession.objects.create(title="Other chat")
    Message.objects.create(session=s, role="user", content="How do I rotate the staging certificates?")
    Message.objects.create(session=other, role="user", content="Unrelated question about lunch")
    url = "/admin/knowledge/message/"
    found = _listed(auth_client.get(url, {"q": "certificate rotating"}))  # stemmed, any order
    assert "rotate the staging certificates" in found and "lunch" not in found
    by_session = _listed(auth_client.get(url, {"q": other.pk}))
    assert "lunch" in by_session and "certificates" not in by_session
    for hostile in ('"', "AND OR NOT", "col:x*", "((("):
        assert auth_client.get(url, {"q": hostile}).status_code == 200
