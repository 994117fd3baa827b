"""The skill curator (docs/BEHAVIOUR.md, Curator): which skills went stale, and what to propose.

A pass never changes a file. It writes one report: a `ReviewRun` with trigger "curator" whose
proposals wait in the inbox as `PendingWrite`s of kind "curator" — archive a skill unused for
`curator.archive_after_days` (or stale and failing), or merge a skill into one it overlaps
(knowledge/skills/duplicates.py). Only an approved item changes the skills folder, through
`apply_pending()`, recorded in the change log and undoable.

Only the agent's own skills are curated (created by a review, or by the agent in a chat); skills
the person wrote, imported or installed are left alone unless `curator.include_user_skills` is on.
A pinned skill is never proposed. The clock is an argument everywhere, so tests pass their own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import Min
from django.utils import timezone

from foundation import config as hermes_config
from knowledge.models import ChatSession, KnowledgeChange, Message, PendingWrite, ReviewRun, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills import archive, outcomes
from knowledge.skills.duplicates import overlap
from knowledge.skills.files import SkillInfo, supporting_files
from knowledge.skills.format import SKILL_FILE, SkillError, check_rel_path, parse_skill_md, validate_existing
from knowledge.skills.store import SkillStore

KIND = "curator"  # PendingWrite.kind and ReviewRun.trigger / prompt_kind of the curator's report
# Who made a skill the curator may curate without being asked: the agent, in a review or a chat.
AGENT_MADE = ("review", "agent")
# A stale skill whose uses went this badly is proposed for archiving before archive_after_days.
POOR_SUCCESS_RATE = 50


@dataclass(frozen=True)
class SkillState:
    """What the curator sees of one skill: its last activity, whether it is stale and why."""

    name: str
    created_by: str
    pinned: bool
    curated: bool  # the curator may propose it (agent-made, or the person opted in; not pinned)
    last_used: datetime | None
    created: datetime | None
    idle_days: int
    stale: bool
    archive_due: bool  # unused past archive_after_days, or stale and failing
    success_rate: int | None
    outcome_uses: int

    @property
    def why(self) -> list[str]:
        """The report's reasons, in a person's words."""
        reasons = []
        if self.last_used is not None:
            reasons.append(f"Unused since {self.last_used:%Y-%m-%d} ({self.idle_days} days).")
        elif self.created is not None:
            reasons.append(f"Never used since it was created on {self.created:%Y-%m-%d} ({self.idle_days} days).")
        if self.success_rate is None:
            reasons.append("No recorded outcomes.")
        else:
            reasons.append(f"Success rate {self.success_rate}% over {self.outcome_uses} use(s).")
        return reasons


@dataclass(frozen=True)
class Proposal:
    action: str  # "archive" | "consolidate"
    name: str  # the skill archived, or the one merged into `into` (and then archived)
    why: list[str]
    into: str = ""

    @property
    def arguments(self) -> dict[str, Any]:
        args: dict[str, Any] = {"action": self.action, "name": self.name, "why": self.why}
        if self.into:
            args["into"] = self.into
        return args


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _created(store: SkillStore, info: SkillInfo, logged: dict[str, datetime]) -> datetime | None:
    """When the skill was created: its first change-log entry, else its SKILL.md's time on disk
    (a skill placed by hand, by Hermes Agent or by an import before the log knew it)."""
    if info.name in logged:
        return logged[info.name]
    try:
        return datetime.fromtimestamp((info.path / SKILL_FILE).stat().st_mtime, tz=UTC)
    except OSError:
        return None


def assess(store: SkillStore, config: hermes_config.Config, now: datetime) -> dict[str, SkillState]:
    """Every listed skill that is not broken, by name, as the curator sees it at `now`."""
    cur = config.curator
    infos = [i for i in store.list() if not i.broken]
    names = [i.name for i in infos]
    usage = {u.name: u for u in SkillUsage.objects.filter(name__in=names)}
    logged = dict(
        KnowledgeChange.objects.filter(kind="skill", target__in=names)
        .values("target")
        .annotate(first=Min("created_at"))
        .values_list("target", "first")
    )
    verified = outcomes.stats(names)
    states = {}
    for info in infos:
        u = usage.get(info.name)
        created_by = u.created_by if u else ""
        pinned = bool(u and u.pinned)
        last_used = _aware(u.last_used) if u and u.last_used else None
        created = _created(store, info, logged)
        anchor = last_used or created or now
        idle = max(0, (now - anchor).days)
        stats = verified.get(info.name)
        rate = stats.success_rate if stats else None
        uses = stats.uses if stats else 0
        stale = idle >= cur.stale_after_days
        failing = rate is not None and uses >= outcomes.FLAG_AFTER and rate < POOR_SUCCESS_RATE
        states[info.name] = SkillState(
            name=info.name,
            created_by=created_by,
            pinned=pinned,
            curated=not pinned and (created_by in AGENT_MADE or cur.include_user_skills),
            last_used=last_used,
            created=created,
            idle_days=idle,
            stale=stale,
            archive_due=idle >= cur.archive_after_days or (stale and failing),
            success_rate=rate,
            outcome_uses=uses,
        )
    return states


# ----- merging two skills -------------------------------------------------------------------


@dataclass
class Merge:
    """`absorb` merged into `keep`: keep's new SKILL.md and the files it gains; absorb is archived."""

    keep: str
    absorb: str
    before: str  # keep's SKILL.md now
    merged: str  # keep's SKILL.md after
    files: list[tuple[str, bytes]] = field(default_factory=list)  # (path in keep's folder, bytes)
    lost: list[str] = field(default_factory=list)  # what neither result would keep (then refused)


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip()}


def _free_path(rel: str, taken: set[str], absorb: str) -> str:
    """`rel`, or `rel` renamed after the absorbed skill when keep has a different file there."""
    if rel not in taken:
        return rel
    stem, dot, ext = rel.rpartition(".")
    base = f"{stem}-{absorb}.{ext}" if dot and "/" not in ext else f"{rel}-{absorb}"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def plan_merge(store: SkillStore, keep: str, absorb: str) -> Merge:
    """What merging `absorb` into `keep` writes. `lost` lists every line of either SKILL.md (the
    absorbed one's body and description) and every absorbed file that the merged skill would not
    hold: the merge is refused unless it is empty, so nothing is dropped."""
    keep_info, absorb_info = store.get(keep), store.get(absorb)
    before, other = store.read(keep), store.read(absorb)
    try:
        parsed = parse_skill_md(other, lenient=True)
        body, description = parsed.body.strip(), parsed.description
    except SkillError:
        body, description = other.strip(), ""  # a skill placed without frontmatter: all of it is body
    keep_files = {rel: path.read_bytes() for rel, path in supporting_files(keep_info.path)}
    taken = set(keep_files)
    files: list[tuple[str, bytes]] = []
    lost: list[str] = []
    for rel, path in supporting_files(absorb_info.path):
        data = path.read_bytes()
        if keep_files.get(rel) == data:
            continue  # the same file is there already
        target = _free_path(rel, taken, absorb)
        try:
            check_rel_path(target, support_only=True)
        except SkillError:
            lost.append(f"the file {rel} (it cannot be copied: {target})")
            continue
        taken.add(target)
        files.append((target, data))
    section = [f"## Merged from {absorb}", ""]
    if description:
        section += [f"_{description}_", ""]
    section.append(body)
    if files:
        section += ["", f"Files from {absorb}: " + ", ".join(rel for rel, _ in files)]
    merged = before.rstrip("\n") + "\n\n" + "\n".join(section).rstrip("\n") + "\n"
    lost += [line for line in sorted(_lines(before) | _lines(body) | _lines(description)) if line not in merged]
    return Merge(keep, absorb, before, merged, files, lost)


def _pairs(store: SkillStore, states: dict[str, SkillState]) -> list[tuple[str, str, str]]:
    """(keep, absorb, why they overlap) for curated skills that overlap, each skill in one pair."""
    infos = {i.name: i for i in store.list() if i.name in states and states[i.name].curated}
    uses = dict(SkillUsage.objects.filter(name__in=list(infos)).values_list("name", "uses"))
    names = sorted(infos)
    paired: set[str] = set()
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if a in paired or b in paired:
                continue
            reason = overlap(a, infos[a].description, b, infos[b].description)
            if not reason:
                continue
            # The one used more (then used more recently, then the older) keeps its name.
            keep, absorb = sorted((a, b), key=lambda n: (-uses.get(n, 0), states[n].idle_days, n))
            pairs.append((keep, absorb, reason))
            paired |= {a, b}
    return pairs


# ----- the pass -----------------------------------------------------------------------------


def _declined(name: str, action: str, since: datetime | None) -> bool:
    """The person rejected this proposal after the skill's last activity: not proposed again
    until the skill is used."""
    rejected = PendingWrite.objects.filter(kind=KIND, status="rejected")
    if since is not None:
        rejected = rejected.filter(decided_at__gte=since)
    return any(
        isinstance(p.arguments, dict) and p.arguments.get("name") == name and p.arguments.get("action") == action
        for p in rejected
    )


def _waiting() -> set[str]:
    """Skills a report still waiting in the inbox proposes already (archive or either side of a merge)."""
    names: set[str] = set()
    for args in PendingWrite.objects.filter(kind=KIND, status="pending").values_list("arguments", flat=True):
        if isinstance(args, dict):
            names |= {str(args.get("name", "")), str(args.get("into", ""))} - {""}
    return names


def propose(store: SkillStore, config: hermes_config.Config, now: datetime) -> list[Proposal]:
    """What a pass at `now` proposes: merges of overlapping skills first, then archives."""
    states = assess(store, config, now)
    busy = _waiting()
    proposals: list[Proposal] = []
    if config.curator.consolidate:
        for keep, absorb, reason in _pairs(store, states):
            last = states[absorb].last_used or states[absorb].created
            if {keep, absorb} & busy or _declined(absorb, "consolidate", last):
                continue
            if plan_merge(store, keep, absorb).lost:
                continue  # a merge that would drop something is never proposed
            why = [f"Overlaps with '{keep}' ({reason}).", *states[absorb].why]
            proposals.append(Proposal("consolidate", absorb, why, into=keep))
            busy |= {keep, absorb}
    for name, state in sorted(states.items()):
        if not state.curated or not state.archive_due or name in busy:
            continue
        if _declined(name, "archive", state.last_used or state.created):
            continue
        proposals.append(Proposal("archive", name, state.why))
    return proposals


def _first_activity() -> datetime | None:
    return ChatSession.objects.aggregate(first=Min("started_at"))["first"]


def due(config: hermes_config.Config, now: datetime) -> bool:
    """A pass is due: on, `interval_hours` after the last report (after the first chat when there was
    none, so a new home is not curated at once), and no chat message for `min_idle_hours`."""
    cur = config.curator
    if not cur.enabled:
        return False
    last = ReviewRun.objects.filter(trigger=KIND).order_by("-created_at").values_list("created_at", flat=True).first()
    since = last or _first_activity()
    if since is None or now - since < timedelta(hours=cur.interval_hours):
        return False
    latest = Message.objects.order_by("-created_at").values_list("created_at", flat=True).first()
    return latest is None or now - latest >= timedelta(hours=cur.min_idle_hours)


def run_pass(config: hermes_config.Config | None = None, now: datetime | None = None) -> ReviewRun | None:
    """The periodic dry run: a report when one is due (`due`), else None. Nothing on disk changes."""
    config = config or hermes_config.get()
    now = now or timezone.now()
    if not due(config, now):
        return None  # most rounds: one query, and the skills folder is not touched
    store = SkillStore(config)
    # The skills lock makes the check and the report one step across processes: each daphne
    # worker and learning_worker asks in its periodic round, and one report is written.
    with store.locked():
        return _report(store, config, now) if due(config, now) else None


def run_now(config: hermes_config.Config | None = None, now: datetime | None = None) -> ReviewRun:
    """A dry run the person asked for (the skills page): the report, due or not."""
    config = config or hermes_config.get()
    store = SkillStore(config)
    with store.locked():
        return _report(store, config, now or timezone.now())


def _report(store: SkillStore, config: hermes_config.Config, now: datetime) -> ReviewRun:
    """One report: a done `ReviewRun` with a waiting `PendingWrite` per proposal."""
    proposals = propose(store, config, now)
    counts = {a: sum(1 for p in proposals if p.action == a) for a in ("archive", "consolidate")}
    summary = (
        f"Curator report: {counts['archive']} to archive, {counts['consolidate']} to merge; nothing changed yet"
        if proposals
        else "Curator report: nothing to propose"
    )
    run = ReviewRun.objects.create(
        trigger=KIND, prompt_kind=KIND, status="done", summary=summary, started_at=now, finished_at=now
    )
    ReviewRun.objects.filter(pk=run.pk).update(created_at=now)  # the pass's own clock
    run.created_at = now
    for p in proposals:
        PendingWrite.objects.create(
            kind=KIND, tool_name=KIND, arguments=p.arguments, review=run, reason=" ".join(p.why)
        )
    return run


# ----- applying an approved item ------------------------------------------------------------


def _result(success: bool, text: str, **extra: Any) -> str:
    key = "message" if success else "error"
    return json.dumps({"success": success, key: text, **extra})


def _still_proposable(store: SkillStore, name: str, report: ReviewRun | None, *, keeper: bool = False) -> str:
    """Why the item no longer holds ("" when it does): the skill is gone, pinned, or (unless it is
    the skill a merge keeps) used since the report."""
    if store.find(name) is None:
        return f"there is no skill '{name}' any more"
    usage = SkillUsage.objects.filter(name=name).first()
    if usage is not None and usage.pinned:
        return f"'{name}' was pinned since the report"
    used = usage.last_used if usage is not None else None
    if not keeper and used and report is not None and used > report.created_at:
        return f"'{name}' was used since the report, on {used:%Y-%m-%d}"
    return ""


def apply_pending(pending: PendingWrite, prov: Provenance) -> str:
    """Apply an approved curator item (the applier of kind "curator"); the result as JSON."""
    args = pending.arguments if isinstance(pending.arguments, dict) else {}
    action, name, into = str(args.get("action", "")), str(args.get("name", "")), str(args.get("into", ""))
    store = SkillStore(hermes_config.get())
    why = " ".join(str(w) for w in args.get("why", []) if isinstance(w, str))
    gone = _still_proposable(store, name, pending.review)
    if not gone and action == "consolidate":
        gone = _still_proposable(store, into, pending.review, keeper=True)
    if gone:
        return _result(False, f"Not done: {gone}.")
    try:
        if action == "archive":
            archive.archive(store, name, prov, why=why)
            return _result(True, f"Archived skill '{name}'; restore it from the Skills page", changed=True)
        if action == "consolidate":
            return _consolidate(store, into, name, prov)
    except (SkillError, OSError) as exc:
        return _result(False, str(exc))
    return _result(False, f"The curator has no action {action!r}.")


def _consolidate(store: SkillStore, keep: str, absorb: str, prov: Provenance) -> str:
    merge = plan_merge(store, keep, absorb)
    if merge.lost:
        return _result(False, "Not merged: the merged skill would not keep " + "; ".join(merge.lost[:5]))
    info = store.get(keep)
    validate_existing(merge.merged, keep, info.path.name, lenient=bool(info.warning))  # before any write
    absorbed = {rel: path.read_bytes() for rel, path in supporting_files(store.get(absorb).path)}
    absorbed[SKILL_FILE] = (store.get(absorb).path / SKILL_FILE).read_bytes()
    store.edit(keep, merge.merged, prov=prov)
    for rel, data in merge.files:
        store.write_bytes(keep, rel, data, prov=prov)
    moved = archive.archive(store, absorb, prov, why=f"merged into '{keep}'")
    # Checked, not trusted: the archived folder holds every byte the absorbed skill had.
    folder = store.root / moved.after
    kept = {rel: path.read_bytes() for rel, path in supporting_files(folder)}
    kept[SKILL_FILE] = (folder / SKILL_FILE).read_bytes()
    if kept != absorbed:
        return _result(False, f"'{absorb}' was archived but its archived folder differs; see {moved.after}")
    return _result(True, f"Merged skill '{absorb}' into '{keep}' and archived '{absorb}'", changed=True)
