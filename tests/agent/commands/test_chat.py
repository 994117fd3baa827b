"""The terminal chat, run as a real subprocess against the scripted model server."""

from __future__ import annotations

import pytest

from tests import dbs
from tests.cli import new_home
from tests.fakellm import Reply

pytestmark = pytest.mark.slow


def _rows(home, sql, *args):
    return dbs.query(home.path, sql, *args)


def test_two_turns_then_resume_same_conversation_and_prompt(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    r = home.manage("chat", "--session", "demo", "-m", "hi", "-m", "again")
    assert r.returncode == 0, r.stderr
    assert "answer to hi" in r.stdout and "answer to again" in r.stdout
    first, second = server.requests[0], server.requests[1]
    assert [m["content"] for m in second["messages"][1:]] == ["hi", "answer to hi", "again"]
    r2 = home.manage("chat", "--session", "demo", "-m", "third")
    assert r2.returncode == 0, r2.stderr
    assert "answer to third" in r2.stdout
    third = server.requests[-1]
    assert third["messages"][0] == first["messages"][0]  # the same stored system prompt, byte for byte
    assert [m["content"] for m in third["messages"][1:]] == ["hi", "answer to hi", "again", "answer to again", "third"]
    assert _rows(home, "select count(*) from knowledge_chatsession where name='demo'") == [(1,)]


def test_no_model_configured_is_one_clear_line(tmp_path):
    home = new_home(tmp_path)
    r = home.manage("chat", "-m", "hello")
    assert r.returncode != 0
    assert "No model is configured" in r.stderr
    assert "Traceback" not in r.stderr
    assert _rows(home, "select content from knowledge_message where role='user'") == [("hello",)]


@pytest.mark.parametrize("failure", ["down", "http500", "timeout"])
def test_model_failure_shows_one_error_line_keeps_message_and_next_turn_works(tmp_path, server, failure):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text("model:\n  timeout: 1\n  max_retries: 1\n")
    env = {}
    if failure == "down":
        env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    elif failure == "http500":
        server.push(Reply(status=500, error_message="boom"), Reply(status=500, error_message="boom"))
    else:
        server.push(Reply(text="late", delay=3), Reply(text="late", delay=3))
    r = home.manage("chat", "--session", "s", "-m", "remember this question", env=env)
    assert r.returncode == 1
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert _rows(home, "select content from knowledge_message where role='user'") == [("remember this question",)]
    r2 = home.manage("chat", "--session", "s", "-m", "next")
    assert r2.returncode == 0, r2.stderr
    assert "answer to next" in r2.stdout
    sent = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert sent == ["remember this question", "next"]


def test_malformed_tool_call_json_is_returned_to_model_and_turn_completes(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    server.push(
        Reply(tool_calls=[{"name": "memory", "arguments": '{"target": "user", "action": '}]), Reply(text="fixed it")
    )
    r = home.manage("chat", "-m", "save my name")
    assert r.returncode == 0, r.stderr
    assert "fixed it" in r.stdout
    tool_msgs = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in tool_msgs[0]["content"]
    assert "Traceback" not in r.stderr


def test_interactive_prompt_reads_lines_until_eof(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    r = home.manage("chat", "--session", "i", input="first line\nsecond line\n")
    assert r.returncode == 0, r.stderr
    assert "answer to first line" in r.stdout and "answer to second line" in r.stdout


def test_agent_saves_memory_creates_and_views_skill_and_next_session_knows(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    skill = (
        "---\nname: tea-brewing\ndescription: How the user brews green tea\n---\n# Steps\nWater at 80C, 2 minutes.\n"
    )
    server.push(
        Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {"target": "user", "action": "add", "content": "Only drinks green tea"},
                }
            ]
        ),
        Reply(
            tool_calls=[
                {"name": "skill_manage", "arguments": {"action": "create", "name": "tea-brewing", "content": skill}}
            ]
        ),
        Reply(tool_calls=[{"name": "skill_view", "arguments": {"name": "tea-brewing"}}]),
        Reply(text="Saved your tea preferences."),
    )
    r = home.manage("chat", "-m", "I only drink green tea; remember how I brew it")
    assert r.returncode == 0, r.stderr
    assert "Saved your tea preferences." in r.stdout
    viewed = [m for m in server.requests[3]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Water at 80C" in viewed
    first_prompt = server.requests[0]["messages"][0]["content"]
    assert "green tea" not in first_prompt  # the frozen snapshot does not change mid-session
    r = home.manage("chat", "-m", "hello again")
    assert r.returncode == 0, r.stderr
    prompt = server.requests[-1]["messages"][0]["content"]
    assert "USER PROFILE (who the user is)" in prompt and "Only drinks green tea" in prompt
    assert "- tea-brewing: How the user brews green tea" in prompt


def test_first_run_in_a_new_home_creates_the_database(tmp_path, server):
    from tests.cli import CLIHome

    home = CLIHome(tmp_path / "brand-new-home", server.base_url)
    home.path.mkdir()
    r = home.manage("chat", "-m", "hello")
    assert r.returncode == 0, r.stderr
    assert "answer to hello" in r.stdout
    assert (home.path / "config.yaml").exists()
    assert _rows(home, "select count(*) from knowledge_chatsession") == [(1,)]  # its database was created


def test_good_and_bad_give_a_verdict_on_the_last_answer_and_reach_the_skill(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    skill = home.path / "skills" / "deploy-app" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy-app\ndescription: Deploy the app\n---\n# Steps\n1. make deploy\n")
    r = home.manage("chat", "-m", "/bad nothing to judge yet", "-m", "/deploy-app now", "-m", "/bad it hit production")
    assert r.returncode == 0, r.stderr
    assert "There is no answer yet" in r.stderr
    assert "Noted 👎 on the last answer." in r.stdout
    # The verdict words are not sent to the model as a turn.
    assert not any("it hit production" in str(b["messages"]) for b in server.requests)
    assert _rows(home, "select verdict, note from knowledge_answerfeedback") == [("bad", "it hit production")]
    assert _rows(home, "select name, via, outcome, detail from knowledge_skilloutcome") == [
        ("deploy-app", "slash", "bad", "it hit production")
    ]


def test_the_terminal_continues_the_version_the_chat_shows(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    assert home.manage("chat", "--session", "demo", "-m", "hi", "-m", "again").returncode == 0
    # In the browser the last answer was regenerated, then the first version chosen again.
    script = (
        "from knowledge import versions\n"
        "from knowledge.models import ChatSession, Message\n"
        "chat = ChatSession.objects.get(name='demo')\n"
        "asked = Message.objects.get(session=chat, content='again')\n"
        "first = Message.objects.get(session=chat, content='answer to again')\n"
        "Message.objects.create(session=chat, parent=asked, role='assistant', content='a newer answer')\n"
        "versions.choose(chat, first.pk)\n"
    )
    assert home.manage("shell", "--no-imports", "-c", script).returncode == 0
    r = home.manage("chat", "--session", "demo", "-m", "third", "-m", "/good right")
    assert r.returncode == 0, r.stderr
    sent = [m["content"] for m in server.requests[-1]["messages"][1:]]
    assert sent == ["hi", "answer to hi", "again", "answer to again", "third"]
    assert _rows(
        home, "select content from knowledge_message m join knowledge_answerfeedback f on f.message_id = m.id"
    ) == [("answer to third",)]
