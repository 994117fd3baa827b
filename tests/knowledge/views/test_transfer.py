"""The import/export page: import a home by path, see it listed, undo it once, download an
export; every bad input is a clear error on the page and changes nothing."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from knowledge.models import ChatSession, Message, ReviewRun

pytestmark = pytest.mark.django_db

SKILL = "---\nname: git-bisect\ndescription: Find the commit that broke a test\n---\n\n# Bisect\n\nRun it.\n"


def _hermes_home(root: Path) -> Path:
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "USER.md").write_text("Name: Ada\n§\nTimezone: Europe/Paris", encoding="utf-8")
    (root / "skills" / "git-bisect").mkdir(parents=True)
    (root / "skills" / "git-bisect" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    return root


def test_the_page_and_the_import_need_the_login(client, home: Path, tmp_path: Path):
    resp = client.get("/transfer/")
    assert resp.status_code == 302 and "/login" in resp["Location"]
    resp = client.post("/transfer/import/", {"path": str(_hermes_home(tmp_path / "old"))})
    assert resp.status_code == 302 and "/login" in resp["Location"]
    assert not ReviewRun.objects.exists() and not (home / "skills" / "git-bisect").exists()


def test_import_by_path_shows_the_report_lists_the_run_and_undo_works_once(auth_client, home: Path, tmp_path: Path):
    page = auth_client.get("/transfer/").content.decode()
    assert "No imports yet." in page
    resp = auth_client.post("/transfer/import/", {"path": str(_hermes_home(tmp_path / "old"))})
    body = resp.content.decode()
    run = ReviewRun.objects.get(trigger="import")
    assert resp.status_code == 200 and 'id="import-report"' in body
    assert "0 memory and 2 user-profile entries added, 1 skills" in body and f'id="import-{run.pk}"' in body
    assert (home / "skills" / "git-bisect" / "SKILL.md").read_text() == SKILL
    resp = auth_client.post(f"/transfer/imports/{run.pk}/undo/")
    assert resp.status_code == 200 and f"Import #{run.pk} undone: 3 changes reverted." in resp.content.decode()
    assert not (home / "skills" / "git-bisect").exists() and not (home / "memories" / "USER.md").exists()
    again = auth_client.post(f"/transfer/imports/{run.pk}/undo/")
    assert again.status_code == 400 and "already undone" in again.content.decode()


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({}, "Choose a .zip or .tar.gz of a Hermes home"),
        ({"path": "relative/home"}, "is not an absolute path on this machine"),
    ],
)
def test_a_bad_import_form_is_a_clear_error(auth_client, home: Path, form, message):
    resp = auth_client.post("/transfer/import/", form)
    body = resp.content.decode()
    assert resp.status_code == 400 and "Nothing was imported." in body and message in body
    assert not ReviewRun.objects.exists()


def test_a_folder_that_is_not_a_hermes_home_is_refused(auth_client, home: Path, tmp_path: Path):
    resp = auth_client.post("/transfer/import/", {"path": str(tmp_path)})
    assert resp.status_code == 400 and "not a Hermes home" in resp.content.decode()


def test_undo_of_an_unknown_import_is_an_error_and_get_is_not_allowed(auth_client, home: Path):
    resp = auth_client.post("/transfer/imports/4242/undo/")
    assert resp.status_code == 400 and "There is no import #4242." in resp.content.decode()
    assert auth_client.get("/transfer/import/").status_code == 405
    assert auth_client.post("/transfer/export/").status_code == 405


def test_export_downloads_a_tar_gz_with_the_sessions(auth_client, home: Path):
    s = ChatSession.objects.create(title="Kept", source="web")
    Message.objects.create(session=s, role="user", content="remember this")
    resp = auth_client.get("/transfer/export/")
    assert resp.status_code == 200 and resp["Content-Type"] == "application/gzip"
    assert 'attachment; filename="hermes-export-' in resp["Content-Disposition"]
    with tarfile.open(fileobj=io.BytesIO(b"".join(resp.streaming_content)), mode="r:gz") as tar:
        names = tar.getnames()
        messages = tar.extractfile("hermes-export/messages.jsonl").read()  # type: ignore[union-attr]
    assert "hermes-export/sessions.jsonl" in names and b"remember this" in messages


def test_a_refused_path_stays_in_the_box(auth_client, home: Path, tmp_path: Path):
    for typed in ("relative/home", str(tmp_path)):
        html = auth_client.post("/transfer/import/", {"path": typed}).content.decode()
        assert f'id="import-path" placeholder="/home/me/.hermes" size="40" value="{typed}"' in html
