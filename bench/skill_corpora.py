"""11. Real skill corpora through the import: how many published skills come in whole, beside how
many hostile ones are refused.

    .venv/bin/python -m bench.skill_corpora --corpus anthropic=PATH --corpus hermes=PATH
    SKILL_CORPUS_ANTHROPIC=PATH SKILL_CORPUS_HERMES=PATH .venv/bin/python -m bench skill_corpora

PATH is a local checkout (its skills/ folder is used) or a skills folder itself; the corpora are
read where they are and never copied into this repository. Every skill goes through the real
import (knowledge/transfer/hermes_import.py: SkillStore.create and write_bytes, the threat scan
on every file, then the listing's scan) into a fresh home per corpus. A skill is *whole* when it
was added, every file of its folder arrived byte for byte (hidden ones aside, which an import
reports and skips), and it is usable (in the prompt's index and skill_view).

The hostile side is the threat corpora of tests/knowledge/verification (injections, exfiltration,
disguises, what Hermes Agent refuses, other languages) written as skills three ways: in
SKILL.md's prose, inside a fenced code block, and as a scripts/ file, imported the same way; a
hostile skill counts as caught when the import refuses it or the listing leaves it out.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import ROOT, Figure, django_setup, temp_home

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ENV_PREFIX = "SKILL_CORPUS_"
SCALES: dict[str, dict[str, Any]] = {"full": {"hostile_every": 1}, "tiny": {"hostile_every": 25}}
_CHUNK = 60  # hostile skills per home: each create lists the home's skills once


@dataclass
class CorpusResult:
    label: str
    total: int = 0
    whole: int = 0
    files: int = 0
    outside_support_dirs: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def corpora_from_env() -> dict[str, Path]:
    return {
        key[len(ENV_PREFIX) :].lower(): Path(value)
        for key, value in sorted(os.environ.items())
        if key.startswith(ENV_PREFIX) and value
    }


def skills_folder(path: Path) -> Path:
    path = path.expanduser()
    return path / "skills" if (path / "skills").is_dir() else path


def _fresh_home(config: str = "") -> Path:
    from foundation import config as hermes_config

    home = temp_home("hermes-skill-corpus-")
    (home / "config.yaml").write_text(config, encoding="utf-8")
    os.environ["HERMES_HOME"] = str(home)
    hermes_config.reset()
    return home


def _visible_files(folder: Path) -> Iterator[tuple[str, Path]]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                path = Path(dirpath, name)
                yield path.relative_to(folder).as_posix(), path


def import_corpus(label: str, path: Path) -> CorpusResult:
    """Import every skill of the corpus at `path` into a fresh home and check each came in whole."""
    from knowledge.skills.files import skill_folders
    from knowledge.skills.format import SKILL_FILE, SUPPORT_DIRS
    from knowledge.skills.store import SkillStore
    from knowledge.transfer.hermes_import import import_home

    started = time.monotonic()
    source = skills_folder(path)
    home = _fresh_home()
    staging = temp_home("hermes-skill-source-")
    shutil.copytree(source, staging / "skills", symlinks=True)
    report = import_home(staging, label)
    store = SkillStore()
    listed = {info.path.resolve(): info for info in store.list()}
    result = CorpusResult(label)
    for category, folder in skill_folders(staging / "skills"):
        result.total += 1
        dest = (store.root / category / folder.name).resolve()
        info = listed.get(dest)
        label_of = f"{category}/{folder.name}" if category else folder.name
        why = [
            f"{i.name}: {i.outcome} ({i.reason})"
            for i in report.problems
            if i.name == label_of or i.name.startswith(f"{folder.name}/")
        ]
        if info is None:
            why.append("not in the store")
        elif not info.usable:
            why.append(info.error or "disabled")
        for rel, src in _visible_files(folder):
            if rel == SKILL_FILE:
                continue
            result.files += 1
            result.outside_support_dirs += rel.split("/")[0] not in SUPPORT_DIRS
            got = dest / rel
            if not got.is_file() or got.read_bytes() != src.read_bytes():
                why.append(f"{rel} missing or changed")
        if why:
            result.problems.append(f"{category}/{folder.name}: " + "; ".join(why))
        else:
            result.whole += 1
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    result.seconds = time.monotonic() - started
    return result


def hostile_texts() -> list[str]:
    from tests.knowledge.verification.threat_corpus import HOSTILE, obfuscations
    from tests.knowledge.verification.threat_corpus_disguise import disguised
    from tests.knowledge.verification.threat_corpus_hermes import HERMES_BLOCKED
    from tests.knowledge.verification.threat_corpus_intl import HOSTILE_INTL

    texts = [t for t, _ in HOSTILE] + [t for _, t in obfuscations()] + [t for _, t in disguised()]
    texts += HERMES_BLOCKED + [t for items in HOSTILE_INTL.values() for t in items]
    return list(dict.fromkeys(texts))


def _hostile_skill(folder: Path, name: str, text: str, way: str) -> None:
    body = {"prose": f"# Note\n\n{text}\n", "code block": f"# Note\n\nRun this:\n\n```bash\n{text}\n```\n"}
    folder.mkdir(parents=True)
    md = f"---\nname: {name}\ndescription: A note kept for the team.\n---\n\n" + body.get(
        way, "# Note\n\nSee the script.\n"
    )
    (folder / "SKILL.md").write_text(md, encoding="utf-8")
    if way == "script":
        (folder / "scripts").mkdir()
        (folder / "scripts" / "run.sh").write_text(f"#!/bin/sh\n# {text}\n", encoding="utf-8")


def hostile_caught(way: str, texts: list[str]) -> tuple[int, int]:
    """(caught, total): hostile texts written as skills one `way`, imported in homes of a few dozen."""
    from knowledge.skills.store import SkillStore
    from knowledge.transfer.hermes_import import import_home

    caught = 0
    for start in range(0, len(texts), _CHUNK):
        home = _fresh_home()
        staging = temp_home("hermes-hostile-skills-")
        names = {}
        for i, text in enumerate(texts[start : start + _CHUNK], start):
            name = f"hostile-{i:04d}"
            names[name] = text
            _hostile_skill(staging / "skills" / name, name, text, way)
        report = import_home(staging, "hostile")
        refused = {i.name.split("/")[0] for i in report.problems}  # the skill, or one of its files
        usable = {info.name for info in SkillStore().list() if info.usable}
        caught += sum(1 for name in names if name in refused or name not in usable)
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    return caught, len(texts)


def run(scale: str, corpora: dict[str, Path] | None = None) -> list[Figure]:
    django_setup(temp_home())
    corpora = corpora_from_env() if corpora is None else corpora
    texts = hostile_texts()[:: SCALES[scale]["hostile_every"]]
    hostile = {way: hostile_caught(way, texts) for way in ("prose", "code block", "script")}
    hostile_note = "; ".join(f"{way} {c}/{n} ({c / n:.1%})" for way, (c, n) in hostile.items())
    caught = sum(c for c, _ in hostile.values())
    total = sum(n for _, n in hostile.values())
    figures = []
    for label, path in corpora.items():
        r = import_corpus(label, path)
        refused = r.total - r.whole
        figures.append(
            Figure(
                "11",
                f"skill corpus '{label}': skills imported whole",
                "skills",
                median=float(r.whole),
                ref_median=float(caught),
                reference=f"hostile skills caught (of {total})",
                result=f"{r.whole}/{r.total} whole, {refused / max(1, r.total):.1%} refused or partial; "
                f"hostile caught {caught}/{total} ({caught / max(1, total):.1%})",
                goal="every skill whole; hostile as caught as before",
                met=refused == 0,
                n=r.total,
                notes=f"{r.files} supporting files ({r.outside_support_dirs} outside references/, templates/, scripts/, "
                f"assets/); hostile by way: {hostile_note}; {r.seconds:.0f}s"
                + (f"; not whole: {' | '.join(r.problems)}" if r.problems else ""),
            )
        )
    if not corpora:
        figures.append(
            Figure(
                "11",
                "skill corpora: hostile skills caught (no corpus checkout given)",
                "skills",
                median=float(caught),
                result=f"hostile caught {caught}/{total} ({caught / max(1, total):.1%}); set "
                f"{ENV_PREFIX}<NAME>=<checkout> to measure real skills",
                notes=f"hostile by way: {hostile_note}",
                n=total,
            )
        )
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=[], metavar="NAME=PATH", help="a checkout to import")
    parser.add_argument("--scale", choices=sorted(SCALES), default="full")
    args = parser.parse_args(argv)
    corpora = dict(corpora_from_env())
    for item in args.corpus:
        name, _, path = item.partition("=")
        corpora[name] = Path(path)
    for fig in run(args.scale, corpora):
        print(f"{fig.name}: {fig.result}")
        print(f"    {fig.notes}")


if __name__ == "__main__":
    main()
