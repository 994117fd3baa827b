"""The same sessions for the same query on both databases: one history and one list of queries
(English, Chinese, mixed, phrases, prefixes, exclusions, titles), each with the sessions it must
find. The suite runs on SQLite and on PostgreSQL (scripts/test.sh), so both answer every query of
this table alike — `deploy OR 部署` included, which once found only the Chinese half on SQLite."""

from __future__ import annotations

import pytest

from knowledge.models import ChatSession, Message
from knowledge.search import search_messages, search_sessions
from knowledge.search.sanitize import exclusion_problem

pytestmark = pytest.mark.django_db

HISTORY: dict[str, tuple[str, list[str]]] = {
    "deploy_en": ("Friday", ["we were deploying on friday", "the deployment failed"]),
    "redeploy": ("Later", ["a redeploy only"]),
    "docker": ("Compose", ["deploy with docker compose"]),
    "k8s": ("Cluster", ["deploy to kubernetes"]),
    "mixed_deploy": ("Script", ["deploy 脚本 部署"]),
    "deploy_zh": ("服务器", ["服务器部署失败了"]),
    "deploy_zh_ok": ("上线", ["部署完成"]),
    "db_zh": ("迁移", ["数据库迁移完成"]),
    "pg": ("Vacuum", ["postgres vacuum settings"]),
    "mixed_db": ("备份", ["postgres 数据库 备份"]),
    "titled": ("fingerprint-login", ["sensor calibration"]),
}

QUERIES: list[tuple[str, set[str]]] = [
    ("deploy", {"deploy_en", "docker", "k8s", "mixed_deploy"}),  # stemmed words, not "redeploy"
    ("deploy OR 部署", {"deploy_en", "docker", "k8s", "mixed_deploy", "deploy_zh", "deploy_zh_ok"}),
    ("部署 OR deploy", {"deploy_en", "docker", "k8s", "mixed_deploy", "deploy_zh", "deploy_zh_ok"}),
    ("数据库 OR postgres", {"db_zh", "pg", "mixed_db"}),
    ("postgres 数据库", {"mixed_db"}),
    ("kubernetes OR 数据库迁移", {"k8s", "db_zh"}),
    ("部署", {"mixed_deploy", "deploy_zh", "deploy_zh_ok"}),
    ('"docker compose"', {"docker"}),
    ('"compose docker"', set()),
    ("deploy*", {"deploy_en", "docker", "k8s", "mixed_deploy"}),
    ("deploy* OR 数据库", {"deploy_en", "docker", "k8s", "mixed_deploy", "db_zh", "mixed_db"}),
    ("deploy -docker", {"deploy_en", "k8s", "mixed_deploy"}),
    ("deploy NOT docker", {"deploy_en", "k8s", "mixed_deploy"}),
    ('deploy -"docker compose"', {"deploy_en", "k8s", "mixed_deploy"}),
    ("deploy -部署", {"deploy_en", "docker", "k8s"}),
    ("deploy -docker -kubernetes", {"deploy_en", "mixed_deploy"}),
    ("部署 -失败", {"mixed_deploy", "deploy_zh_ok"}),
    ("部署 -deploy", {"deploy_zh", "deploy_zh_ok"}),
    ("数据库 -postgres", {"db_zh"}),
    ("deploy -docker OR 数据库 -迁移", {"deploy_en", "k8s", "mixed_deploy", "mixed_db"}),
    ("fingerprint", {"titled"}),  # the title alone
    ("fingerprint -login", set()),  # the title holds the word left out
    ("sensor", {"titled"}),
    ("服务器", {"deploy_zh"}),  # a Chinese title and its message
]


@pytest.fixture
def history() -> dict[str, str]:
    ids: dict[str, str] = {}
    for key, (title, lines) in HISTORY.items():
        session = ChatSession.objects.create(title=title)
        for line in lines:
            Message.objects.create(session=session, role="user", content=line)
        ids[key] = session.id
    return ids


@pytest.mark.parametrize(("query", "expected"), QUERIES, ids=[q for q, _ in QUERIES])
def test_each_query_finds_the_same_sessions(history: dict[str, str], query: str, expected: set[str]) -> None:
    names = {sid: key for key, sid in history.items()}
    page = search_messages(query, limit=50)
    found = {names[h.session_id] for h in page.results} | {names[t.session_id] for t in page.titles}
    assert found == expected
    assert page.total == len(page.results)  # the count agrees with the page
    assert {names[h.session_id] for h in search_sessions(query, limit=10)} == expected


@pytest.mark.parametrize("query", ["-docker", "NOT docker", "deploy OR -docker", "-部署"])
def test_only_exclusions_find_nothing_and_say_why(history: dict[str, str], query: str) -> None:
    page = search_messages(query)
    assert page.results == [] and page.titles == [] and not page.searchable
    assert search_sessions(query) == []
    assert "only leaves words out" in (exclusion_problem(query) or "")
