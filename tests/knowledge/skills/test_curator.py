"""The skill curator: a home with 20 skills of mixed age and use. Its pass changes nothing on disk
and leaves one report in the inbox; approving two items archives them (out of the prompt and the
slash menu, listed as archived, restorable, undoable); pinned and person-written skills are left
alone unless the person opts in. The clock is passed in: nothing sleeps."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foundation import config as hermes_config
from knowledge import undo as knowledge_undo
from knowledge.models import ChatSession, KnowledgeChange, Message, PendingWrite, ReviewRun, SkillOutcome, SkillUsage
from knowledge.prompt import build_system_prompt
from knowledge.provenance import Provenance
from knowledge.skills import archive, curator
from knowledge.skills.store import SkillStore
from tests.conftest import write_config
from tests.knowledge.skills.helpers import skill_md

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
REVIEW = Provenance(actor="review")
PERSON = Provenance(actor="user")

# name -> (who made it, days since created, days since last used or None for never, description)
HOME = {
    "brew-coffee": ("review", 400, 200, "Grind beans and brew a pot of coffee"),
    "rotate-logs": ("review", 300, 120, "Compress and rotate the service log files"),
    "renew-certs": ("review", 200, None, "Renew TLS certificates before they expire"),
    "tune-piano": ("review", 150, 45, "Tune a piano string by string with a fork"),
    "water-plants": ("review", 100, 2, "Water the balcony plants on a schedule"),
    "sort-invoices": ("review", 20, None, "File invoices into folders by month"),
    "pack-tent": ("review", 365, 5, "Fold and pack the camping tent"),
    "feed-cat": ("review", 500, 1, "Feed the cat its wet food at dusk"),
    "bake-bread": ("review", 250, 95, "Knead, proof and bake sourdough bread"),
    "wax-skis": ("review", 180, 150, "Hot-wax cross-country skis for cold snow"),
    "mow-lawn": ("review", 90, 60, "Mow the front lawn in stripes"),
    "fix-bike": ("review", 60, 10, "Patch an inner tube of a bicycle"),
    "read-meter": ("review", 40, None, "Read the electricity meter and note it"),
    "clean-gutter": ("review", 400, 100, "Clear leaves from the roof gutter"),
    "pin-board": ("review", 400, 300, "Arrange notes on the cork pin board"),
    "my-recipes": ("user", 400, 250, "The person's own list of family recipes"),
    "my-budget": ("user", 300, None, "The person's yearly budget spreadsheet steps"),
    "import-notes": ("import", 400, 200, "Notes imported from another home"),
    "chat-made": ("agent", 400, 120, "A checklist the agent wrote during a chat"),
    "learn-chords": ("review", 10, 3, "Practise guitar chord changes daily"),
}
PINNED = "pin-board"
# Unused for 90+ days (or never used since 90+ days ago) and made by the agent, not pinned.
EXPECTED_ARCHIVES = {"brew-coffee", "rotate-logs", "renew-certs", "bake-bread", "wax-skis", "clean-gutter", "chat-made"}


@pytest.fixture
def store(home: Path) -> SkillStore:
    return SkillStore(hermes_config.get())


def make_home(store: SkillStore) -> None:
    for name, (actor, created_days, used_days, description) in HOME.items():
        store.create(name, skill_md(name, description, body=f"# {name}\n1. The {name} step.\n"), prov=Provenance(actor))
        KnowledgeChange.objects.filter(kind="skill", target=name).update(created_at=NOW - timedelta(days=created_days))
        used = NOW - timedelta(days=used_days) if used_days is not None else None
        SkillUsage.objects.filter(name=name).update(last_used=used, uses=0 if used is None else 3)
    SkillUsage.objects.filter(name=PINNED).update(pinned=True)
    # A chat from long ago, quiet since: a pass is due at NOW.
    chat = ChatSession.objects.create(title="curator home")
    ChatSession.objects.filter(pk=chat.pk).update(started_at=NOW - timedelta(days=30))
    msg = Message.objects.create(session=chat, role="user", content="hello")
    Message.objects.filter(pk=msg.pk).update(created_at=NOW - timedelta(days=3))


def tree(root: Path) -> dict[str, tuple[str, float]]:
    """Every file under the skills folder with its content hash and modification time."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for fn in files:
            p = Path(dirpath, fn)
            out[p.relative_to(root).as_posix()] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime)
    return out


def report_items(run: ReviewRun) -> dict[str, PendingWrite]:
    return {p.arguments["name"]: p for p in PendingWrite.objects.filter(review=run)}


def test_the_first_pass_changes_nothing_and_leaves_one_report(store: SkillStore, home: Path) -> None:
    make_home(store)
    before = tree(home / "skills")
    changes = KnowledgeChange.objects.count()

    run = curator.run_pass(hermes_config.get(), NOW)

    assert run is not None and run.trigger == "curator"
    assert tree(home / "skills") == before  # not a byte, not a timestamp
    assert not (home / "skills" / ".archive").exists()
    assert KnowledgeChange.objects.count() == changes
    assert ReviewRun.objects.filter(trigger="curator").count() == 1
    items = report_items(run)
    assert set(items) == EXPECTED_ARCHIVES
    assert all(p.status == "pending" and p.kind == "curator" for p in items.values())
    assert PINNED not in items  # pinned, though unused for 300 days
    assert "my-recipes" not in items and "import-notes" not in items  # the person's own
    assert "tune-piano" not in items  # stale (45 days) but not yet due, and its uses went fine
    why = items["brew-coffee"].arguments["why"]
    assert why[0] == f"Unused since {NOW - timedelta(days=200):%Y-%m-%d} (200 days)."
    assert items["renew-certs"].arguments["why"][0].startswith("Never used since it was created on")
    # The next round finds the report and does not write another until the interval passes.
    assert curator.run_pass(hermes_config.get(), NOW + timedelta(hours=1)) is None
    assert curator.run_pass(hermes_config.get(), NOW + timedelta(days=8)) is not None
    # …and that one proposes nothing already waiting in the first report.
    assert ReviewRun.objects.filter(trigger="curator").count() == 2
    assert PendingWrite.objects.filter(kind="curator").count() == len(EXPECTED_ARCHIVES)


def test_approving_two_items_archives_them(store: SkillStore, home: Path, auth_client) -> None:
    make_home(store)
    run = curator.run_pass(hermes_config.get(), NOW)
    assert run is not None
    page = auth_client.get(f"/pending/?review={run.pk}").content.decode()
    assert f"Curator report #{run.pk}" in page
    assert "Unused since" in page and "Approve all from this report" in page

    items = report_items(run)
    for name in ("brew-coffee", "rotate-logs"):
        resp = auth_client.post(f"/pending/{items[name].pk}/approve/")
        assert resp.status_code == 302
        items[name].refresh_from_db()
        assert items[name].status == "approved", items[name].result

    # Gone from the prompt and the slash menu, kept on disk in Hermes' layout.
    prompt = build_system_prompt(hermes_config.get())
    assert "brew-coffee" not in prompt and "rotate-logs" not in prompt and "water-plants" in prompt
    menu = [s["name"] for s in auth_client.get("/api/skills/slash").json()["skills"]]
    assert "brew-coffee" not in menu and "rotate-logs" not in menu and "water-plants" in menu
    assert (home / "skills" / ".archive" / "brew-coffee" / "SKILL.md").is_file()
    assert not (home / "skills" / "brew-coffee").exists()
    assert "brew-coffee" not in [s.name for s in store.list()]
    assert SkillUsage.objects.get(name="brew-coffee").archived_at is not None
    # The rest of the report still waits.
    assert PendingWrite.objects.filter(review=run, status="pending").count() == len(EXPECTED_ARCHIVES) - 2

    # Listed as archived on the skills page, and restorable from there.
    skills_page = auth_client.get("/skills/").content.decode()
    assert 'data-archived="brew-coffee"' in skills_page and 'data-archived="rotate-logs"' in skills_page
    resp = auth_client.post("/skills/archived/brew-coffee/restore/")
    assert resp.status_code == 302
    assert (home / "skills" / "brew-coffee" / "SKILL.md").is_file()
    assert "brew-coffee" in build_system_prompt(hermes_config.get())
    assert SkillUsage.objects.get(name="brew-coffee").archived_at is None

    # The other is undone from the change history.
    archived_change = KnowledgeChange.objects.get(action="archive", target="rotate-logs")
    assert archived_change.review_id == run.pk and archived_change.actor == "user"
    assert "Unused since" in archived_change.summary
    history = auth_client.get(f"/changes/{archived_change.pk}/").content.decode()
    assert "Archived: the folder moved into skills/.archive/" in history
    resp = auth_client.post(f"/changes/{archived_change.pk}/undo/")
    assert resp.status_code == 302
    assert (home / "skills" / "rotate-logs" / "SKILL.md").is_file()
    assert not (home / "skills" / ".archive" / "rotate-logs").exists()
    # Undoing the undo archives it again.
    again = KnowledgeChange.objects.get(undoes=archived_change)
    assert again.action == "restore"
    knowledge_undo.undo(again, PERSON)
    assert (home / "skills" / ".archive" / "rotate-logs" / "SKILL.md").is_file()


def test_approve_all_from_the_report(store: SkillStore, home: Path, auth_client) -> None:
    make_home(store)
    run = curator.run_pass(hermes_config.get(), NOW)
    assert run is not None
    auth_client.post("/pending/approve-review/", {"review": run.pk})
    assert not PendingWrite.objects.filter(review=run, status="pending").exists()
    assert {a.name for a in archive.archived(store)} == EXPECTED_ARCHIVES
    # Undo the whole report from the review page: every skill back where it was.
    auth_client.post(f"/reviews/{run.pk}/undo/")
    assert archive.archived(store) == []
    assert {s.name for s in store.list()} == set(HOME)


def test_pinned_skill_is_never_proposed_and_a_used_one_is_not_archived(store: SkillStore, auth_client) -> None:
    make_home(store)
    run = curator.run_pass(hermes_config.get(), NOW)
    assert run is not None
    items = report_items(run)
    # Pinned after the report: its item is refused when approved, nothing moves.
    auth_client.post("/skills/wax-skis/pin/", {"pin": "1"})
    assert SkillUsage.objects.get(name="wax-skis").pinned
    auth_client.post(f"/pending/{items['wax-skis'].pk}/approve/")
    items["wax-skis"].refresh_from_db()
    assert items["wax-skis"].status == "failed" and "pinned since the report" in items["wax-skis"].result
    # Used since the report: not archived either.
    SkillUsage.objects.filter(name="bake-bread").update(last_used=NOW + timedelta(hours=1))
    auth_client.post(f"/pending/{items['bake-bread'].pk}/approve/")
    items["bake-bread"].refresh_from_db()
    assert items["bake-bread"].status == "failed" and "used since the report" in items["bake-bread"].result
    assert {s.name for s in store.list()} == set(HOME)
    # Later passes never propose a pinned skill.
    later = curator.run_now(hermes_config.get(), NOW + timedelta(days=400))
    assert "wax-skis" not in report_items(later) and PINNED not in report_items(later)


def test_person_written_skills_only_when_opted_in(store: SkillStore, home: Path) -> None:
    make_home(store)
    first = curator.run_now(hermes_config.get(), NOW)
    assert not {"my-recipes", "my-budget", "import-notes"} & set(report_items(first))
    PendingWrite.objects.filter(review=first).update(status="rejected", decided_at=NOW)
    write_config(home, "curator:\n  include_user_skills: true\n")
    second = curator.run_now(hermes_config.get(), NOW)
    assert {"my-recipes", "my-budget", "import-notes"} <= set(report_items(second))
    assert PINNED not in report_items(second)
    # What the person rejected is not proposed again until the skill is used.
    assert "brew-coffee" not in report_items(second)


def test_a_stale_skill_that_keeps_failing_is_proposed_early(store: SkillStore) -> None:
    make_home(store)
    for _ in range(3):
        SkillOutcome.objects.create(name="tune-piano", via="view", outcome="tool_error")
    run = curator.run_now(hermes_config.get(), NOW)
    why = report_items(run)["tune-piano"].arguments["why"]
    assert why == [f"Unused since {NOW - timedelta(days=45):%Y-%m-%d} (45 days).", "Success rate 0% over 3 use(s)."]


def test_overlapping_skills_are_proposed_as_a_merge_that_keeps_everything(store: SkillStore, home: Path) -> None:
    store.create(
        "deploy-app",
        skill_md("deploy-app", "Deploy the web app to production", body="# Deploy\n1. Build.\n2. Push.\n"),
        prov=REVIEW,
    )
    store.create(
        "deploy-apps",
        skill_md("deploy-apps", "Deploy the web app to production servers", body="# Ship\n1. Tag the release.\n"),
        prov=REVIEW,
    )
    store.write_file("deploy-apps", "references/hosts.md", "web1\nweb2\n")
    SkillUsage.objects.filter(name="deploy-app").update(uses=5, last_used=NOW - timedelta(days=1))
    before = tree(home / "skills")
    run = curator.run_now(hermes_config.get(), NOW)
    assert tree(home / "skills") == before
    item = PendingWrite.objects.get(review=run)
    assert item.arguments["action"] == "consolidate"
    assert (item.arguments["name"], item.arguments["into"]) == ("deploy-apps", "deploy-app")
    assert item.arguments["why"][0].startswith("Overlaps with 'deploy-app' (")

    # The skill that keeps its name was used since the report: the merge still holds.
    SkillUsage.objects.filter(name="deploy-app").update(last_used=NOW + timedelta(hours=1))
    assert item.approve()
    assert item.status == "approved", item.result
    merged = store.read("deploy-app")
    for line in ("1. Build.", "2. Push.", "1. Tag the release.", "Deploy the web app to production servers"):
        assert line in merged
    assert store.read("deploy-app", "references/hosts.md") == "web1\nweb2\n"
    assert (home / "skills" / ".archive" / "deploy-apps" / "references" / "hosts.md").read_text() == "web1\nweb2\n"
    assert [s.name for s in store.list()] == ["deploy-app"]
    assert set(KnowledgeChange.objects.filter(review=run).values_list("action", flat=True)) == {
        "edit",
        "write_file",
        "archive",
    }


def test_a_merge_that_would_drop_content_is_refused(store: SkillStore) -> None:
    store.create("deploy-app", skill_md("deploy-app", "Deploy the web app to production"), prov=REVIEW)
    store.create("deploy-apps", skill_md("deploy-apps", "Deploy the web app to production servers"), prov=REVIEW)
    plan = curator.plan_merge(store, "deploy-app", "deploy-apps")
    assert plan.lost == []
    # A hidden file cannot be copied into the merged skill: the merge is not proposed.
    hidden = store.get("deploy-apps").path / ".notes"
    hidden.write_text("secret steps")
    assert curator.plan_merge(store, "deploy-app", "deploy-apps").lost
    assert not any(p.action == "consolidate" for p in curator.propose(store, hermes_config.get(), NOW))


def test_a_new_home_is_not_curated_at_once(store: SkillStore, home: Path) -> None:
    store.create("brew-coffee", skill_md("brew-coffee"), prov=REVIEW)
    assert curator.run_pass(hermes_config.get(), NOW) is None  # no chat yet: the clock has not started
    chat = ChatSession.objects.create(title="fresh")
    ChatSession.objects.filter(pk=chat.pk).update(started_at=NOW - timedelta(days=1))
    assert curator.run_pass(hermes_config.get(), NOW) is None  # not a week yet
    msg = Message.objects.create(session=chat, role="user", content="hi")
    Message.objects.filter(pk=msg.pk).update(created_at=NOW + timedelta(days=7, minutes=-30))
    assert curator.run_pass(hermes_config.get(), NOW + timedelta(days=7)) is None  # a chat 30 minutes ago
    assert curator.run_pass(hermes_config.get(), NOW + timedelta(days=7, hours=2)) is not None
    write_config(home, "curator:\n  enabled: false\n")
    assert curator.run_pass(hermes_config.get(), NOW + timedelta(days=30)) is None


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("curator:\n  stale_after_days: 0\n", "curator.stale_after_days"),
        ("curator:\n  archive_after_days: 10\n", "curator.archive_after_days"),
        ("curator:\n  interval_hours: soon\n", "curator.interval_hours"),
        ("curator:\n  include_user_skills: maybe\n", "curator.include_user_skills"),
    ],
)
def test_a_wrong_curator_value_names_its_key(home: Path, text: str, key: str) -> None:
    (home / "config.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(hermes_config.ConfigError) as err:
        hermes_config.load(home)
    assert err.value.key == key and key in str(err.value)


def test_hermes_curator_keys_are_read_without_warnings(home: Path) -> None:
    (home / "config.yaml").write_text(
        "curator:\n  stale_after_days: 14\n  prune_builtins: true\n  backup:\n    enabled: true\n", encoding="utf-8"
    )
    config = hermes_config.load(home)
    assert config.curator.stale_after_days == 14 and config.warnings == ()
