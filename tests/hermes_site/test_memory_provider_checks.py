"""The dashboard starts and chats without the optional mem0ai library, config.yaml naming mem0:
`manage.py check` (run before every start) warns hermes.W004 with what to install, and a chat in
the terminal answers. Run in subprocesses where the library cannot be imported, whether or not
this environment has it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import new_home

# Imported by Python at start-up from PYTHONPATH: mem0 cannot be found (as if not installed).
WITHOUT_MEM0 = "import sys\nsys.modules['mem0'] = None\n"
CONFIG = "memory:\n  provider: mem0\nembeddings:\n  model: all-minilm\nchat:\n  auto_title: false\n"


def _without_mem0(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "without-mem0"
    site.mkdir()
    (site / "sitecustomize.py").write_text(WITHOUT_MEM0)
    return {"PYTHONPATH": str(site)}


@pytest.mark.slow  # manage.py check and chat in subprocesses
def test_without_the_library_start_up_warns_and_a_chat_still_answers(tmp_path, llm):
    home = new_home(tmp_path, llm.base_url)
    (home.path / "config.yaml").write_text(CONFIG)
    env = _without_mem0(tmp_path)

    check = home.manage("check", env=env)
    assert check.returncode == 0, check.stderr
    assert "(hermes.W004) memory.provider is mem0, but the mem0ai library is not installed" in check.stderr
    assert "pip install -r requirements-mem0.txt" in check.stderr

    chat = home.manage("chat", "-m", "hello there", env=env)
    assert chat.returncode == 0, chat.stderr
    assert "ok" in chat.stdout
    assert [b["messages"][-1]["content"] for b in llm.chat_requests()] == ["hello there"]
