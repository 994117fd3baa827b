"""Situations of a home shared with Hermes Agent, built from files (docs/BEHAVIOUR.md, Sharing a home with Hermes Agent).

Written fresh from reading Hermes Agent's public code: its config.yaml as its `save_config`
writes it (PyYAML block style, keys in its own order, sections the dashboard does not know),
and a skills tree as Hermes installs its bundled skills (three folders deep).
"""

from __future__ import annotations

from pathlib import Path

# config.yaml as Hermes writes it: `yaml.safe_dump(config, sort_keys=False)` of its defaults,
# with the model as its default string shape and a memory provider the dashboard lacks.
HERMES_CONFIG = """\
_config_version: 5
model: anthropic/claude-opus-4
toolsets:
- hermes-cli
agent:
  max_turns: 90
  verbose: false
terminal:
  backend: local
  cwd: .
  timeout: 180
compression:
  enabled: true
  threshold: 0.5
  summary_model: google/gemini-2.5-flash
memory:
  memory_enabled: true
  user_profile_enabled: true
  memory_char_limit: 2200
  user_char_limit: 1375
  nudge_interval: 10
  flush_min_turns: 6
  provider: honcho
skills:
  external_dirs:
  - ~/.agents/skills
  creation_nudge_interval: 10
display:
  compact: false
  personality: kawaii
"""

# Hermes' newer mapping form of the model section.
HERMES_CONFIG_MODEL_MAPPING = HERMES_CONFIG.replace(
    "model: anthropic/claude-opus-4\n",
    "model:\n  default: anthropic/claude-opus-4\n  provider: openrouter\n  base_url: https://openrouter.ai/api/v1\n",
)


def skill_md(name: str, description: str = "", body: str = "") -> str:
    description = description or f"Use {name} when the task needs it."
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{body or 'Do the steps.'}\n"


def write_skill(root: Path, rel: str, description: str = "", body: str = "") -> Path:
    """`root/rel/SKILL.md` for a skill named after the last folder of `rel`."""
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_md(folder.name, description, body), encoding="utf-8")
    return folder


# Hermes' bundled layout: one, two and three folders deep.
DEEP_SKILLS = ("plain-skill", "devops/docker-debug", "mlops/inference/vllm", "mlops/training/axolotl/lora-tune")


def write_deep_tree(root: Path) -> None:
    for rel in DEEP_SKILLS:
        write_skill(root, rel)


# A skill folder as Agent Skills ship them (anthropics/skills): a licence, loose Markdown,
# folders the dashboard used to drop, a font and a binary.
FONT_BYTES = b"\x00\x01\x00\x00\x00\x0f\x00\x80\x00\x03\x00pFFTM" + bytes(range(256)) * 4
BINARY_BYTES = bytes(range(256)) * 16 + b"\xff\xfe\x00\x00"


def write_whole_skill(root: Path, name: str = "canvas-design") -> dict[str, bytes]:
    """A skill folder with every kind of file; returns {relative path: bytes} of its files."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {
        "SKILL.md": skill_md(name, body="Read forms.md, reference/api.md and examples/basic.md.").encode(),
        "LICENSE.txt": b"Apache License\nVersion 2.0\n",
        "forms.md": b"# Forms\n\nFill the form.\n",
        "reference/api.md": b"# API\n\nCall it.\n",
        "examples/basic.md": b"# Basic example\n",
        "core/engine.py": b"def run() -> None:\n    pass\n",
        "themes/dark.json": b'{"background": "#000"}\n',
        "canvas-fonts/Inter-Regular.ttf": FONT_BYTES,
        "bin/tool.wasm": BINARY_BYTES,
    }
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files
