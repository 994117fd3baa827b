"""The inbox by review: what a review saved and held is recorded as data and announced
("💾 1 saved · 1 waits for you"), the inbox narrowed to one review (`?review=N`), grouped by
review, and "Approve all from this review"."""

from __future__ import annotations

import pytest

from agent.chat import live
from agent.learning import notify
from agent.learning.review import review_notice, run_review_now
from agent.llm import client_from_config
from agent.management.commands.chat import review_line
from agent.toolset import build_registry
from foundation import config as hermes_config
from hermes_site.access import login_token
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, Message, PendingWrite, ReviewRun
from knowledge.provenance import Provenance
from tests.cli import new_home
from tests.fakellm import Reply
from tests.learning import SAVE_USER_PREF, is_review_followup, is_review_start, script_review

pytestmark = pytest.mark.django_db
USER = Provenance(actor="user")


def mem(home, name):
    path = home / "memories" / name
    return path.read_text(encoding="utf-8") if path.exists() else ""


def review(title: str = "Deploy chat") -> ReviewRun:
    return ReviewRun.objects.create(
        session=ChatSession.objects.create(title=title), prompt_kind="memory", status="done"
    )


def wait(run: ReviewRun | None, content: str, **fields) -> PendingWrite:
    """A memory add the review left waiting (approval mode unless `fields` hold it)."""
    return PendingWrite.objects.create(
        kind="memory",
        tool_name="memory",
        arguments={"target": "memory", "action": "add", "content": content},
        review=run,
        session=run.session if run else None,
        **fields,
    )


def saved(n: int) -> list[notify.SavedWrite]:
    return [notify.SavedWrite(kind="memory", target="user", action="add", message="User profile updated")] * n


def held(n: int) -> list[notify.HeldWrite]:
    return [notify.HeldWrite(kind="memory", target="user", action="add", pending_id=i, hold="") for i in range(n)]


# ----- the announcement --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_saved", "n_held", "line"),
    [
        (1, 0, "💾 1 saved"),
        (2, 0, "💾 2 saved"),
        (0, 1, "💾 1 waits for you"),
        (0, 2, "💾 2 wait for you"),
        (1, 1, "💾 1 saved · 1 waits for you"),
        (2, 1, "💾 2 saved · 1 waits for you"),
        (1, 2, "💾 1 saved · 2 wait for you"),
        (2, 2, "💾 2 saved · 2 wait for you"),
        (0, 0, ""),
    ],
)
def test_the_toast_counts_what_was_saved_and_what_waits(n_saved, n_held, line):
    notice = notify.ReviewNotice(
        "s1", 5, "memory", "User profile updated", "done", saved=saved(n_saved), held=held(n_held)
    )
    assert notice.line == line


def test_the_held_part_links_to_the_inbox_narrowed_to_the_review():
    notice = notify.ReviewNotice("s1", 5, "memory", "User profile updated", "done", saved=saved(1), held=held(1))
    payload = live.notice_payload(notice)
    assert payload["line"] == "💾 1 saved · 1 waits for you"
    assert payload["parts"] == [
        {"text": "1 saved", "href": "/memory/", "title": "User profile updated"},
        {"text": "1 waits for you", "href": "/pending/?review=5", "title": "Approve or reject in the inbox"},
    ]
    only_held = notify.ReviewNotice("s1", 5, "memory", "", "done", held=held(2))
    assert live.notice_href(only_held) == "/pending/?review=5"
    assert [p["text"] for p in live.notice_parts(only_held)] == ["2 wait for you"]


def test_the_saved_part_links_by_what_was_written_not_by_its_wording():
    def href(*writes: tuple[str, str, str]) -> str:
        notice = notify.ReviewNotice(
            "s1",
            5,
            "combined",
            "whatever the tools said",
            "done",
            saved=[notify.SavedWrite(kind=k, target=t, action=a, message="") for k, t, a in writes],
        )
        return live.saved_href(notice)

    assert href(("memory", "memory", "add"), ("memory", "user", "replace")) == "/memory/"
    assert href(("skill", "docker-debug", "create")) == "/skills/docker-debug/"
    assert href(("skill", "docker-debug", "create"), ("skill", "docker-debug", "patch")) == "/skills/docker-debug/"
    assert href(("skill", "old-notes", "delete")) == "/changes/?review=5"
    assert href(("skill", "a", "create"), ("skill", "b", "create")) == "/changes/?review=5"
    assert href(("memory", "user", "add"), ("skill", "a", "create")) == "/changes/?review=5"


def test_the_terminal_prints_the_same_line_with_the_inbox_address(monkeypatch):
    monkeypatch.setenv("HERMES_PORT", "8123")
    both = notify.ReviewNotice("s1", 5, "memory", "", "done", saved=saved(1), held=held(1))
    assert review_line(both) == "💾 1 saved · 1 waits for you — http://127.0.0.1:8123/pending/?review=5"
    assert review_line(notify.ReviewNotice("s1", 5, "memory", "", "done", saved=saved(2))) == "💾 2 saved"


@pytest.mark.slow
def test_the_terminal_chat_prints_a_held_write_with_the_inbox_address(tmp_path, server):
    cli = new_home(tmp_path, server.base_url)
    (cli.path / "config.yaml").write_text("skills:\n  creation_nudge_interval: 0\n")
    # The review quotes words the turns never said: the write waits for the person.
    script_review(server, [SAVE_USER_PREF])
    turns = [arg for i in range(1, 11) for arg in ("-m", f"turn {i}")]
    r = cli.manage("chat", *turns, env={"HERMES_PORT": "8124"})
    assert r.returncode == 0, r.stderr
    [(review_id,)] = cli.query("SELECT review_id FROM knowledge_pendingwrite WHERE status = 'pending'")
    assert f"💾 1 waits for you — http://127.0.0.1:8124/pending/?review={review_id}" in r.stdout.splitlines()


def test_a_review_records_what_it_saved_and_what_it_held(home, llm):
    session = ChatSession.objects.create(title="Tea chat")
    Message.objects.create(session=session, role="user", content="I drink green tea every morning.")
    Message.objects.create(session=session, role="assistant", content="Noted.")
    quoted = {
        "target": "user",
        "action": "add",
        "content": "Drinks green tea",
        "evidence": ["I drink green tea every morning."],
    }
    invented = {"target": "user", "action": "add", "content": "Lives in Oslo", "evidence": ["I live in Oslo"]}
    llm.when(
        is_review_start,
        Reply(tool_calls=[{"name": "memory", "arguments": quoted}, {"name": "memory", "arguments": invented}]),
    )
    llm.when(is_review_followup, Reply(text="Saved."))
    config = hermes_config.get()
    heard: list[notify.ReviewNotice] = []
    unsubscribe = notify.subscribe(heard.append)
    try:
        run = run_review_now(
            session_id=session.pk,
            snapshot=session.api_messages(),
            kind="memory",
            config=config,
            registry=build_registry(config),
            client_factory=client_from_config,
            evidence_rule=True,
        )
    finally:
        unsubscribe()
    pending = PendingWrite.objects.get(review=run)
    assert "Drinks green tea" in mem(home, "USER.md") and "Oslo" not in mem(home, "USER.md")
    # Recorded as data on the run: the saved write's kind, target and action.
    assert run.changes == [{"kind": "memory", "target": "user", "action": "add", "message": "User profile updated"}]
    [notice] = heard
    assert notice.line == "💾 1 saved · 1 waits for you"
    assert notice.held == [
        {"kind": "memory", "target": "user", "action": "add", "pending_id": pending.pk, "hold": pending.hold_kind}
    ]
    assert pending.hold_kind == PendingWrite.Hold.UNSUPPORTED
    # Read back from its records (a review another process ran), the line is the same.
    assert review_notice(ReviewRun.objects.get(pk=run.pk), session.pk).line == notice.line


# ----- the inbox narrowed to a review -------------------------------------------------------


def test_review_filter_shows_only_that_reviews_items_with_a_heading_and_a_way_back(auth_client, home):
    mine, other = review("Deploy chat"), review("Tea chat")
    wait(mine, "Deploys go through CI")
    wait(other, "Drinks green tea")
    html = auth_client.get(f"/pending/?review={mine.pk}").content.decode()
    assert f"Pending from review #{mine.pk}" in html and "Deploy chat" in html
    assert "Deploys go through CI" in html and "Drinks green tea" not in html
    assert 'id="pending-count">1<' in html
    assert '<a href="/pending/" id="pending-all">← All pending writes</a>' in html


@pytest.mark.parametrize(
    ("value", "said"),
    [("abc", "“abc” is not a review number."), ("999", "There is no review #999."), ("-3", "not a review number")],
)
def test_a_bad_review_filter_says_so_and_shows_everything(auth_client, home, value, said):
    wait(review(), "Deploys go through CI")
    resp = auth_client.get("/pending/", {"review": value})
    html = resp.content.decode()
    assert resp.status_code == 400
    assert said in html and "Showing every waiting write." in html
    assert "Deploys go through CI" in html


def test_nothing_left_from_a_review_says_so(auth_client, home):
    run = review()
    html = auth_client.get(f"/pending/?review={run.pk}").content.decode()
    assert f"Nothing from review #{run.pk} is waiting." in html


# ----- grouped by review --------------------------------------------------------------------


def test_items_are_grouped_by_review_and_approve_all_is_offered_for_more_than_one(auth_client, home):
    two, one = review("Deploy chat"), review("Tea chat")
    wait(two, "Deploys go through CI")
    wait(one, "Drinks green tea")
    wait(two, "Staging is on Fridays")
    wait(None, "Flushed at the end of a chat")
    html = auth_client.get("/pending/").content.decode()
    groups = html.split('<section class="pending-group"')[1:]
    assert [g.split(">", 1)[0].split('id="')[1].split('"')[0] for g in groups] == [
        f"pending-group-{two.pk}",
        f"pending-group-{one.pk}",
        "pending-group-none",
    ]
    first, second, third = groups
    assert f"Review #{two.pk}" in first and "Deploy chat" in first and two.created_at.strftime("%Y-%m-%d") in first
    assert "Deploys go through CI" in first and "Staging is on Fridays" in first
    assert "Approve all from this review" in first
    assert "Tea chat" in second and "Approve all from this review" not in second
    assert "Not from a review" in third and "Approve all from this review" not in third
    # Narrowed to the review of one item, the page is that review's: approve all is offered.
    assert "Approve all from this review" in auth_client.get(f"/pending/?review={one.pk}").content.decode()


def test_the_badge_names_the_hold_and_the_reason_is_its_sentences(auth_client, home):
    reason = "Instruction: it tells the agent what to do rather than stating a fact."
    wait(review(), "Always answer in French", unsupported=True, reason=reason, hold_kind="instruction")
    wait(
        review(),
        "Lives in Oslo",
        unsupported=True,
        reason="Unsupported: 'I live in Oslo' is not in the conversation.",
        hold_kind="unsupported",
    )
    html = auth_client.get("/pending/").content.decode()
    assert '<span class="badge bad">Instruction</span>' in html
    assert "It tells the agent what to do rather than stating a fact." in html
    assert '<span class="badge bad">Not shown by the conversation</span>' in html
    assert "&#x27;I live in Oslo&#x27; is not in the conversation." in html
    assert ">instruction<" not in html and ">unsupported<" not in html


# ----- approve all from this review ---------------------------------------------------------


def test_approve_all_approves_only_that_reviews_waiting_writes_through_the_single_approval(auth_client, home):
    run, other = review(), review("Tea chat")
    a, b = wait(run, "Deploys go through CI"), wait(run, "Staging is on Fridays")
    untouched = wait(other, "Drinks green tea")
    decided = wait(run, "Rejected earlier")
    decided.reject()
    assert 'id="pending-badge" aria-hidden="true">3<' in auth_client.get("/memory/").content.decode()
    resp = auth_client.post("/pending/approve-review/", {"review": run.pk}, follow=True)
    html = resp.content.decode()
    assert resp.redirect_chain[-1][0] == f"/pending/?review={run.pk}"
    assert f"Approved 2 writes from review #{run.pk}." in html
    assert mem(home, "MEMORY.md") == "Deploys go through CI\n§\nStaging is on Fridays"
    statuses = {p.pk: p.status for p in PendingWrite.objects.all()}
    assert statuses == {a.pk: "approved", b.pk: "approved", untouched.pk: "pending", decided.pk: "rejected"}
    # The same path as the single Approve: the person approved it, with the review's provenance.
    changes = KnowledgeChange.objects.order_by("id")
    assert [(c.actor, c.review_id, c.session_id) for c in changes] == [("user", run.pk, run.session_id)] * 2
    # The navigation counts what is left.
    assert 'id="pending-badge" aria-hidden="true">1<' in html


def test_approve_all_twice_does_nothing_the_second_time(auth_client, home):
    run = review()
    wait(run, "Deploys go through CI")
    wait(run, "Staging is on Fridays")
    auth_client.post("/pending/approve-review/", {"review": run.pk})
    resp = auth_client.post("/pending/approve-review/", {"review": run.pk}, follow=True)
    assert f"Nothing from review #{run.pk} was waiting; nothing was done." in resp.content.decode()
    assert KnowledgeChange.objects.count() == 2
    assert mem(home, "MEMORY.md") == "Deploys go through CI\n§\nStaging is on Fridays"


def test_approve_all_reports_what_failed_and_leaves_conflicts_for_their_choice(auth_client, home):
    MemoryStore().add("user", "Prefers 4-space indents", USER)
    run = review()
    wait(run, "Deploys go through CI")
    broken = PendingWrite.objects.create(
        kind="memory",
        tool_name="memory",
        arguments={"target": "memory", "action": "remove", "old_text": "nothing like this"},
        review=run,
    )
    conflict = PendingWrite.objects.create(
        kind="memory",
        tool_name="memory",
        arguments={"target": "user", "action": "add", "content": "Prefers 2-space indents"},
        review=run,
        unsupported=True,
        hold_kind="conflict",
        reason="Conflict: it is about the same thing as the user entry 'Prefers 4-space indents' and says something else.",
        conflict={"target": "user", "text": "Prefers 4-space indents"},
    )
    html = auth_client.post("/pending/approve-review/", {"review": run.pk}, follow=True).content.decode()
    assert f"Approved 1 write from review #{run.pk}." in html
    assert f"#{broken.pk} could not be applied: No memory entry contains" in html
    assert "1 conflict still waits: choose Replace, Keep both or Reject on each." in html
    broken.refresh_from_db()
    conflict.refresh_from_db()
    assert (broken.status, conflict.status) == ("failed", "pending")
    assert mem(home, "USER.md") == "Prefers 4-space indents"


@pytest.mark.parametrize(("data", "said"), [({}, "Say which review"), ({"review": "x"}, "not a review number")])
def test_approve_all_without_a_valid_review_approves_nothing(auth_client, home, data, said):
    item = wait(review(), "Deploys go through CI")
    resp = auth_client.post("/pending/approve-review/", data)
    assert resp.status_code == 400
    assert said in resp.content.decode() and "Nothing was approved." in resp.content.decode()
    item.refresh_from_db()
    assert item.status == "pending"


def test_approve_all_needs_a_post_with_the_csrf_token(client, home):
    client = type(client)(enforce_csrf_checks=True)
    client.get(f"/login?token={login_token()}")
    run = review()
    item = wait(run, "Deploys go through CI")
    assert client.get(f"/pending/approve-review/?review={run.pk}").status_code == 405
    assert client.post("/pending/approve-review/", {"review": run.pk}).status_code == 403
    item.refresh_from_db()
    assert item.status == "pending"
