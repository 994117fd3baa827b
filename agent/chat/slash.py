"""Slash invocation of a skill (docs/BEHAVIOUR.md, Skills): `/<name> <instruction>`; and the one
command that is not a skill, `/refine [focus]` (a review of the chat now).

The expanded text goes to the model only for this turn; the runner stores the user's original
text as their message (and sends that to external memory providers), so history and search
show what the person typed, not the skill's body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.prompt import neutral_fences
from knowledge.skills.format import MAX_NAME_CHARS, SkillError
from knowledge.skills.store import SkillStore

# The name must be followed by whitespace or the end, so "/etc/hosts is slow" is not a skill call.
_SLASH_RE = re.compile(rf"^/([a-z0-9][a-z0-9._-]{{0,{MAX_NAME_CHARS - 1}}})(?:\s+(.*))?$", re.DOTALL)


# `/refine [focus]`: review this chat now (docs/BEHAVIOUR.md, The learning loop). A command, not a skill:
# the chat page and the terminal run it instead of sending it, so it shadows a skill named "refine".
REFINE = "refine"
_REFINE_RE = re.compile(rf"^/{REFINE}(?:\s+(.*))?$", re.DOTALL)


def refine_focus(text: str) -> str | None:
    """The focus of a `/refine [focus]` line ("" for none), or None when the text is not one."""
    match = _REFINE_RE.match(text.strip())
    if match is None:
        return None
    return " ".join((match.group(1) or "").split())


@dataclass(frozen=True)
class SlashInvocation:
    skill_name: str
    instruction: str
    model_text: str
    original_text: str


def _model_text(name: str, path: str, content: str, files: list[str], instruction: str) -> str:
    file_lines = "\n".join(f"- {f}" for f in files) if files else "(none)"
    return (
        f'The user invoked the skill "{name}". Follow it to carry out the instruction below.\n\n'
        # A body holding "</skill>" must not close the fence: what follows would read as the person's.
        f'<skill name="{name}" path="{path}">\n{neutral_fences(content.rstrip())}\n</skill>\n\n'
        f"Supporting files in {path} (read one with skill_view(name, file_path)):\n{file_lines}\n\n"
        f"User instruction: {instruction or '(none given: apply the skill to the current conversation)'}"
    )


def expand_slash(text: str, store: SkillStore) -> SlashInvocation | None:
    """The invocation for `/<name> ...` when <name> is an enabled, valid skill; else None."""
    match = _SLASH_RE.match(text.strip())
    if match is None:
        return None
    name, instruction = match.group(1), (match.group(2) or "").strip()
    try:
        info = store.get(name)
        if not info.usable:
            return None  # disabled or broken skills are invisible: the text goes as typed
        name = info.name  # by its folder's name too, it is used and counted by the name it is listed by
        content = store.read(name)
        files = store.files(name)
    except SkillError:
        return None  # not a skill (e.g. "/tmp ..."): send the text as typed
    store.record_use(name)
    return SlashInvocation(
        skill_name=name,
        instruction=instruction,
        model_text=_model_text(name, str(info.path), content, files, instruction),
        original_text=text,
    )


def model_text_of(user_text: str, store: SkillStore) -> tuple[str, str | None]:
    """What the model sees for this user message (a /skill invocation is expanded), and the
    invoked skill's name."""
    invocation = expand_slash(user_text, store)
    if invocation is None:
        return user_text, None
    return invocation.model_text, invocation.skill_name
