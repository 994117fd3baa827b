"""The curator on the skills page: pin and unpin, what the curator sees (stale, pinned), the archived
list with Restore, and "Ask the curator now" opening its report in the inbox."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from foundation import config as hermes_config
from knowledge.models import PendingWrite, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills import archive
from knowledge.skills.store import SkillStore
from tests.knowledge.skills.helpers import skill_md

pytestmark = pytest.mark.django_db
REVIEW = Provenance(actor="review")


def old_skill(name: str, days: int = 200) -> None:
    SkillStore(hermes_config.get()).create(name, skill_md(name, f"Steps for {name}"), prov=REVIEW)
    SkillUsage.objects.filter(name=name).update(last_used=timezone.now() - timedelta(days=days), uses=1)


def test_pin_and_unpin(auth_client, home) -> None:
    old_skill("brew-coffee")
    page = auth_client.get("/skills/").content.decode()
    assert 'aria-label="Pin brew-coffee"' in page and ">stale</span>" in page
    resp = auth_client.post("/skills/brew-coffee/pin/", {"pin": "1"}, follow=True)
    assert "Pinned &#x27;brew-coffee&#x27;: the curator will never propose it." in resp.content.decode()
    assert SkillUsage.objects.get(name="brew-coffee").pinned
    assert 'aria-label="Unpin brew-coffee"' in resp.content.decode()
    auth_client.post("/skills/brew-coffee/pin/", {"pin": "0"})
    assert not SkillUsage.objects.get(name="brew-coffee").pinned
    # A wrong request is refused in words, and nothing changes.
    resp = auth_client.post("/skills/no-such-skill/pin/", {"pin": "1"}, follow=True)
    assert "There is no skill &#x27;no-such-skill&#x27;." in resp.content.decode()
    assert not SkillUsage.objects.filter(name="no-such-skill").exists()


def test_ask_now_opens_the_report_and_nothing_changes(auth_client, home) -> None:
    old_skill("brew-coffee")
    old_skill("water-plants", days=1)
    resp = auth_client.post("/skills/curator/run/")
    [item] = PendingWrite.objects.filter(kind="curator")
    assert resp.status_code == 302 and resp["Location"] == f"/pending/?review={item.review_id}"
    assert item.arguments["name"] == "brew-coffee"
    assert (home / "skills" / "brew-coffee" / "SKILL.md").is_file()
    # Asked again: what waits already is not proposed twice.
    resp = auth_client.post("/skills/curator/run/", follow=True)
    assert "The curator has nothing to propose." in resp.content.decode()
    assert PendingWrite.objects.filter(kind="curator").count() == 1


def test_archived_skills_are_listed_and_restored(auth_client, home) -> None:
    old_skill("brew-coffee")
    store = SkillStore(hermes_config.get())
    archive.archive(store, "brew-coffee", Provenance(actor="user"))
    page = auth_client.get("/skills/").content.decode()
    assert 'data-archived="brew-coffee"' in page and 'data-skill="brew-coffee"' not in page
    resp = auth_client.post("/skills/archived/brew-coffee/restore/", follow=True)
    assert "Restored &#x27;brew-coffee&#x27;" in resp.content.decode()
    assert 'data-skill="brew-coffee"' in resp.content.decode()
    resp = auth_client.post("/skills/archived/brew-coffee/restore/", follow=True)
    assert "Not restored: There is no archived skill &#x27;brew-coffee&#x27;." in resp.content.decode()


def test_a_curator_proposal_is_approved_as_made_or_rejected(auth_client, home) -> None:
    old_skill("brew-coffee")
    SkillStore(hermes_config.get()).create("my-recipes", skill_md("my-recipes"), prov=Provenance(actor="user"))
    auth_client.post("/skills/curator/run/")
    [item] = PendingWrite.objects.filter(kind="curator")
    edited = '{"action": "archive", "name": "my-recipes", "why": []}'
    resp = auth_client.post(f"/pending/{item.pk}/approve/", {"arguments": edited})
    assert resp.status_code == 400
    assert "A curator proposal cannot be edited" in resp.content.decode()
    item.refresh_from_db()
    assert item.status == "pending"
    assert (home / "skills" / "my-recipes" / "SKILL.md").is_file()
    auth_client.post(f"/pending/{item.pk}/reject/")
    item.refresh_from_db()
    assert item.status == "rejected" and (home / "skills" / "brew-coffee" / "SKILL.md").is_file()


def test_the_skills_own_page_pins_and_archives(auth_client, home) -> None:
    old_skill("brew-coffee")
    resp = auth_client.post("/skills/brew-coffee/pin/", {"pin": "1", "back": "detail"})
    assert resp["Location"] == "/skills/brew-coffee/"
    page = auth_client.get("/skills/brew-coffee/").content.decode()
    assert ">pinned</span>" in page and ">Unpin</button>" in page
    resp = auth_client.post("/skills/brew-coffee/archive/", follow=True)
    assert "Archived &#x27;brew-coffee&#x27;" in resp.content.decode()
    assert (home / "skills" / ".archive" / "brew-coffee" / "SKILL.md").is_file()
    assert 'data-archived="brew-coffee"' in resp.content.decode()
