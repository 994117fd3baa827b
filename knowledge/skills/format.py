"""The SKILL.md format (the open Agent Skills format) and skill path rules.

Pure functions, no Django and no file system writes: the store, the tools, the importer and
the skills page all validate through here, so a skill the UI accepts is one the agent accepts.
Every error is a sentence a person can act on, because it is shown next to the editor and
returned to the model as tool output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

import yaml

from knowledge.verification.threat_normalize import char_label, is_hidden

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_SKILL_CHARS = 100_000
MAX_FILE_BYTES = 1024 * 1024
# A SKILL.md over MAX_SKILL_CHARS written elsewhere (one of Hermes' bundled skills) is listed
# with a warning, as Hermes does; beyond this it is refused even then.
MAX_LENIENT_SKILL_CHARS = MAX_FILE_BYTES
SKILL_FILE = "SKILL.md"
# The folders the Agent Skills format names for supporting files. Any other file in a skill's folder is kept too
# (LICENSE.txt, reference/, examples/, fonts: Agent Skills ship them and SKILL.md points at them).
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")
MAX_REL_PATH_CHARS = 500
# Hermes discovers skills recursively and installs its bundled ones three folders deep
# (skills/mlops/inference/vllm); deeper than this is not searched, so a stray tree cannot stall a listing.
MAX_SKILL_DEPTH = 6

# Frontmatter between a first line `---` and the next line that is exactly `---`.
_FRONTMATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_EMPTY_FRONTMATTER_RE = re.compile(r"\A---[ \t]*\r?\n---[ \t]*(?:\r?\n|\Z)")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


class SkillError(Exception):
    """A skill operation was refused; str(error) is the explanation shown to the user or model."""


class SkillFormatError(SkillError, ValueError):
    """SKILL.md or a skill path breaks a format rule."""


@dataclass(frozen=True)
class ParsedSkill:
    frontmatter: dict[str, Any]
    body: str
    name: str = ""
    description: str = ""
    tags: list[str] = field(default_factory=list)
    # Limits the file breaks that a lenient read lets through (shown next to the skill).
    warnings: list[str] = field(default_factory=list)


def check_file_size(size: int, label: str) -> None:
    """Every file of a skill, SKILL.md included, is capped (what an import, the tools and the pages share)."""
    if size > MAX_FILE_BYTES:
        raise SkillError(
            f"'{label}' is {size:,} bytes; each file of a skill is limited to {MAX_FILE_BYTES:,} bytes. "
            "Nothing was written."
        )


def check_name(name: object, what: str = "skill name") -> str:
    """A skill or category name; the regex alone keeps `..`, `/`, NUL and spaces out of paths."""
    if not isinstance(name, str) or not name:
        raise SkillFormatError(f"The {what} is required and must be a string.")
    if len(name) > MAX_NAME_CHARS:
        raise SkillFormatError(f"The {what} is {len(name)} characters; the limit is {MAX_NAME_CHARS}.")
    if not NAME_RE.fullmatch(name):  # fullmatch: "$" alone lets a trailing newline through
        raise SkillFormatError(
            f"The {what} {name!r} is not allowed: use lowercase letters, digits, '.', '_' and '-', "
            "starting with a letter or digit."
        )
    return name


def check_category(category: object) -> str:
    """A category is a folder path of names ("mlops/inference"), as Hermes nests its bundled skills."""
    if not isinstance(category, str):
        raise SkillFormatError("The category must be a string.")
    parts = category.split("/") if category else []
    if len(parts) >= MAX_SKILL_DEPTH:
        raise SkillFormatError(f"The category '{category}' is nested deeper than {MAX_SKILL_DEPTH - 1} folders.")
    for part in parts:
        check_name(part, "category name")
    return category


def _check_frontmatter_fields(fm: dict[str, Any], lenient: bool = False) -> None:
    if "name" not in fm or fm["name"] is None:
        raise SkillFormatError("frontmatter: 'name' is required")
    if not isinstance(fm["name"], str):
        raise SkillFormatError("frontmatter: 'name' must be a string")
    if len(fm["name"]) > MAX_NAME_CHARS:
        raise SkillFormatError(f"frontmatter: 'name' is {len(fm['name'])} characters; the limit is {MAX_NAME_CHARS}")
    if not NAME_RE.fullmatch(fm["name"]):
        raise SkillFormatError(
            f"frontmatter: 'name' {fm['name']!r} must match ^[a-z0-9][a-z0-9._-]*$ "
            "(lowercase letters, digits, '.', '_', '-')"
        )
    if "description" not in fm or fm["description"] is None:
        raise SkillFormatError("frontmatter: 'description' is required")
    if not isinstance(fm["description"], str):
        raise SkillFormatError("frontmatter: 'description' must be a string")
    if not fm["description"].strip():
        raise SkillFormatError("frontmatter: 'description' must not be empty")
    if len(fm["description"]) > MAX_DESCRIPTION_CHARS and not lenient:
        raise SkillFormatError(
            f"frontmatter: 'description' is {len(fm['description'])} characters; the limit is {MAX_DESCRIPTION_CHARS}"
        )
    if "version" in fm and not isinstance(fm["version"], str | int | float):
        raise SkillFormatError("frontmatter: 'version' must be a string or a number")
    if "license" in fm and not isinstance(fm["license"], str):
        raise SkillFormatError("frontmatter: 'license' must be a string")
    for key in ("tags", "related_skills"):
        if key in fm and not (isinstance(fm[key], list) and all(isinstance(x, str) for x in fm[key])):
            raise SkillFormatError(f"frontmatter: '{key}' must be a list of strings")
    if "metadata" in fm and not isinstance(fm["metadata"], dict):
        raise SkillFormatError("frontmatter: 'metadata' must be a mapping")
    # Other keys (author, platforms, ...) are kept as written: skills imported from an existing
    # Hermes home carry them, and refusing them would make those skills uneditable here.


def _size_warnings(text: str, description: str) -> list[str]:
    warnings = []
    if len(text) > MAX_SKILL_CHARS:
        warnings.append(f"SKILL.md is {len(text):,} characters, over the limit of {MAX_SKILL_CHARS:,}.")
    if len(description) > MAX_DESCRIPTION_CHARS:
        warnings.append(
            f"The description is {len(description):,} characters, over the Agent Skills limit of "
            f"{MAX_DESCRIPTION_CHARS:,}: the skill is used and its file kept whole; the skills list in the system "
            f"prompt shows the description truncated to {MAX_DESCRIPTION_CHARS:,} characters."
        )
    return warnings


def truncate_description(description: str) -> str:
    if len(description) <= MAX_DESCRIPTION_CHARS:
        return description
    return description[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"


def parse_skill_md(text: str, *, lenient: bool = False) -> ParsedSkill:
    """Parse and validate a whole SKILL.md; raise SkillFormatError explaining the first problem.

    `lenient` reads a skill written elsewhere as Hermes does: an over-long description or
    SKILL.md is accepted (description truncated) and named in `warnings` instead of refused.
    """
    if not isinstance(text, str):
        raise SkillFormatError("SKILL.md content must be a string.")
    cap = MAX_LENIENT_SKILL_CHARS if lenient else MAX_SKILL_CHARS
    if len(text) > cap:
        raise SkillFormatError(f"SKILL.md is {len(text):,} characters; the limit is {cap:,}.")
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        raise SkillFormatError("SKILL.md must start with YAML frontmatter: a '---' line, the fields, then '---'.")
    empty = _EMPTY_FRONTMATTER_RE.match(text)
    match = empty or _FRONTMATTER_RE.match(text)
    if match is None:
        raise SkillFormatError("frontmatter: no closing '---' line after the YAML fields.")
    yaml_text = "" if empty else match.group(1)
    try:
        fm = yaml.safe_load(yaml_text) if yaml_text.strip() else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        # The YAML starts on the file's second line, after the opening '---'.
        line = f" on line {mark.line + 2}" if mark is not None else ""
        raise SkillFormatError(f"YAML error{line}: {exc.problem or exc.context or exc}") from exc
    except yaml.YAMLError as exc:
        raise SkillFormatError(f"YAML error: {exc}") from exc
    if fm is None:
        raise SkillFormatError("frontmatter: 'name' is required")
    if not isinstance(fm, dict):
        raise SkillFormatError("frontmatter: must be a YAML mapping of fields (name: ..., description: ...)")
    _check_frontmatter_fields(fm, lenient)
    body = text[match.end() :]
    if not body.strip():
        raise SkillFormatError("SKILL.md body is empty: write the procedure after the frontmatter.")
    return ParsedSkill(
        frontmatter=fm,
        body=body,
        name=fm["name"],
        description=truncate_description(fm["description"]),
        tags=list(fm.get("tags") or []),
        warnings=_size_warnings(text, fm["description"]),
    )


def require_frontmatter(text: object) -> None:
    """A whole new SKILL.md from the model starts with its frontmatter, as Hermes' skill_manage
    requires on create and edit, even for a skill placed without one (the text replaces it all)."""
    if not isinstance(text, str) or not text.removeprefix("\ufeff").startswith("---"):
        raise SkillFormatError(
            "SKILL.md must start with YAML frontmatter: a '---' line, then 'name:' and 'description:', then "
            "'---', then the body. Send the whole file with its frontmatter (skill_view shows the current one)."
        )


def validate_skill_md(text: str, expected_name: str, *, lenient: bool = False) -> ParsedSkill:
    """parse_skill_md plus: the frontmatter name is the skill's (folder) name."""
    parsed = parse_skill_md(text, lenient=lenient)
    if parsed.name != expected_name:
        raise SkillFormatError(
            f"frontmatter: 'name' is {parsed.name!r} but the skill is {expected_name!r}; they must be equal."
        )
    return parsed


def first_paragraph(body: str) -> str:
    """The first paragraph of prose in a body (headings and blank lines skipped), as one line."""
    lines: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            if lines:
                break
            continue
        lines.append(stripped)
    return one_line(" ".join(lines))


def read_placed_skill(text: str, folder_name: str) -> ParsedSkill:
    """A SKILL.md found on disk (placed by hand, by Hermes or by an import), read as Hermes reads it.

    Hermes lists a skill by its frontmatter name even when its folder is named otherwise (some
    of its own bundled skills are), and uses a SKILL.md without frontmatter with the folder's
    name and the first paragraph as description. Both are accepted here with a note, so a home
    shared with Hermes offers the same skills. What the agent itself creates follows the
    stricter Agent Skills rules (`validate_skill_md`).
    """
    stripped = text.removeprefix("\ufeff")
    if not stripped.startswith("---"):
        if len(stripped) > MAX_LENIENT_SKILL_CHARS:
            raise SkillFormatError(
                f"SKILL.md is {len(stripped):,} characters; the limit is {MAX_LENIENT_SKILL_CHARS:,}."
            )
        if not stripped.strip():
            raise SkillFormatError("SKILL.md is empty.")
        description = truncate_description(first_paragraph(stripped)) or folder_name
        note = (
            f"SKILL.md has no frontmatter: it is used as '{folder_name}' (its folder's name), described by its "
            "first paragraph. Add a '---' block with name and description to describe it yourself."
        )
        return ParsedSkill(
            frontmatter={},
            body=stripped,
            name=folder_name,
            description=description,
            warnings=[note, *_size_warnings(stripped, "")],
        )
    parsed = parse_skill_md(stripped, lenient=True)
    if parsed.name == folder_name:
        return parsed
    note = f"Its frontmatter names it '{parsed.name}', and so it is listed and invoked; its folder is '{folder_name}'."
    return ParsedSkill(
        frontmatter=parsed.frontmatter,
        body=parsed.body,
        name=parsed.name,
        description=parsed.description,
        tags=parsed.tags,
        warnings=[*parsed.warnings, note],
    )


def validate_existing(text: str, name: str, folder_name: str, *, lenient: bool) -> ParsedSkill:
    """A new text for a skill already on disk: it keeps the name it is listed by. A skill placed
    without frontmatter may stay without it (as Hermes keeps it); otherwise the rules of
    `validate_skill_md`, lenient for a skill that already broke a limit."""
    if name == folder_name and isinstance(text, str) and not text.removeprefix("\ufeff").startswith("---"):
        return read_placed_skill(text, folder_name)
    return validate_skill_md(text, name, lenient=lenient)


def render_skill_md(frontmatter: dict[str, Any], body: str) -> str:
    """A SKILL.md from fields and body (name and description first, as people expect to read)."""
    ordered: dict[str, Any] = {k: frontmatter[k] for k in ("name", "description") if k in frontmatter}
    ordered.update({k: v for k, v in frontmatter.items() if k not in ordered})
    fm_text = yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=1000)
    text = f"---\n{fm_text}---\n\n{body.strip()}\n"
    parse_skill_md(text)
    return text


def one_line(text: str) -> str:
    """A description as one index line (YAML block scalars may span lines)."""
    return " ".join(text.split())


def check_rel_path(file_path: object, *, support_only: bool) -> PurePosixPath:
    """A path relative to a skill's folder, refused if it could name anything outside it.

    This is the textual check; the store also resolves the path on disk (symlinks) and checks
    it stays inside the folder. `support_only` (write_file, remove_file, patch of a file) leaves
    out SKILL.md itself, which only create / edit / patch of the skill change, validated.
    """
    if not isinstance(file_path, str) or not file_path:
        raise SkillFormatError("file_path is required and must be a string.")
    if len(file_path) > MAX_REL_PATH_CHARS:
        raise SkillFormatError(f"file_path is longer than {MAX_REL_PATH_CHARS} characters.")
    if "\x00" in file_path or _CONTROL_RE.search(file_path):
        raise SkillFormatError("file_path must not contain NUL or control characters.")
    if "\\" in file_path:
        raise SkillFormatError("file_path must use '/' separators; backslashes are not allowed.")
    if "%" in file_path and unquote(file_path) != file_path:
        # A later layer (a URL, a shell) could decode %2e%2e into '..'; refuse it up front.
        raise SkillFormatError("file_path must not contain percent-encoded characters.")
    if file_path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", file_path):
        raise SkillFormatError("file_path must be relative to the skill's folder, not absolute.")
    parts = file_path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise SkillFormatError("file_path must not contain '..', '.' or empty segments.")
    if any(len(p) > 255 for p in parts):
        raise SkillFormatError("file_path has a segment longer than 255 characters.")
    if any(p.startswith(".") for p in parts):
        raise SkillFormatError("file_path must not name hidden files or folders (a segment starting with '.').")
    hidden = next((ch for ch in file_path if is_hidden(ch)), None)
    if hidden is not None:
        # U+202E turns "\u202egnp.sh" into "hs.png" on screen: the name shown is not the file.
        raise SkillFormatError(f"file_path contains the invisible or direction-changing character {char_label(hidden)}")
    if support_only and parts == [SKILL_FILE]:
        raise SkillFormatError(f"{SKILL_FILE} is changed with edit or patch, which validate it; not as a file.")
    return PurePosixPath(*parts)
