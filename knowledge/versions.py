"""A chat's versions, kept in place: every message follows its parent, so an edited question or a
regenerated answer is a sibling of the one it replaces (same parent, same role) inside the same
chat. The chat shows, continues, exports and reviews one path: from its first message down to
the chosen leaf (`ChatSession.leaf`; None means the newest message, which every new message is).

Choosing a version of a turn shows the conversation that followed it: the newest message written
below that version becomes the leaf. docs/DECISIONS.md says why versions live in one chat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from knowledge import models

if TYPE_CHECKING:
    from knowledge.models import ChatSession, Message


class VersionError(ValueError):
    """A version that cannot be chosen or made; the message says why in plain words."""


@dataclass
class Tree:
    """The shape of one chat: each message's parent and role, children in the order written."""

    parents: dict[int, int | None] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)
    children: dict[int | None, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: list[tuple[int, int | None, str]]) -> Tree:
        tree = cls()
        for pk, parent, role in sorted(rows):
            tree.parents[pk], tree.roles[pk] = parent, role
            tree.children.setdefault(parent, []).append(pk)
        return tree

    @classmethod
    def load(cls, session_id: str) -> Tree:
        rows = models.Message.objects.filter(session_id=session_id).values_list("id", "parent_id", "role")
        return cls.of(list(rows))

    def leaf(self, chosen: int | None) -> int | None:
        """The chosen leaf if it exists, else the newest message (None in an empty chat)."""
        if chosen is not None and chosen in self.parents:
            return chosen
        return max(self.parents) if self.parents else None

    def path(self, leaf: int | None) -> list[int]:
        """The messages from the first one down to `leaf`, in order."""
        ids: list[int] = []
        seen: set[int] = set()
        node = leaf if leaf in self.parents else None
        while node is not None and node not in seen:  # a loop in bad data ends the walk
            seen.add(node)
            ids.append(node)
            node = self.parents.get(node)
        ids.reverse()
        return ids

    def siblings(self, pk: int) -> list[int]:
        """The versions of the turn `pk` is one version of (itself included), oldest first."""
        role = self.roles[pk]
        return [c for c in self.children.get(self.parents[pk], []) if self.roles[c] == role]

    def newest_below(self, pk: int) -> int:
        """The newest message written below `pk` (or `pk`): the leaf shown when `pk` is chosen."""
        newest, stack = pk, [pk]
        while stack:
            kids = self.children.get(stack.pop(), [])
            stack.extend(kids)
            newest = max([newest, *kids])
        return newest


def chosen_leaf(session: ChatSession, tree: Tree | None = None) -> int | None:
    return (tree or Tree.load(session.pk)).leaf(session.leaf_id)


def chosen_path(session: ChatSession, tree: Tree | None = None) -> list[int]:
    tree = tree or Tree.load(session.pk)
    return tree.path(tree.leaf(session.leaf_id))


def off_path(session: ChatSession) -> set[int]:
    """The messages of other versions than the chosen one (usually none): what the model, the
    review and the evidence check leave out."""
    tree = Tree.load(session.pk)
    return set(tree.parents) - set(tree.path(tree.leaf(session.leaf_id)))


def leaf_of(session_id: str) -> int | None:
    """The last message of the chosen version of the chat with this id (None: no messages)."""
    session = models.ChatSession.objects.filter(pk=session_id).only("id", "leaf_id").first()
    return chosen_leaf(session) if session is not None else None


def off_path_of(session_id: str) -> set[int]:
    session = models.ChatSession.objects.filter(pk=session_id).only("id", "leaf_id").first()
    return off_path(session) if session is not None else set()


def path_messages(session: ChatSession, upto_id: int | None = None) -> list[Message]:
    """The stored messages of the chosen version, or of the version ending at `upto_id` (0: none)."""
    rows = list(models.Message.objects.filter(session=session).order_by("id"))
    tree = Tree.of([(m.pk, m.parent_id, m.role) for m in rows])
    wanted = set(tree.path(tree.leaf(session.leaf_id) if upto_id is None else upto_id))
    return [m for m in rows if m.pk in wanted]


def keep_summary(session: ChatSession, path: list[int]) -> bool:
    """Whether a compressed context still describes `path` (it summarised messages on it); if not,
    the summary is dropped so the model gets the whole of the new version (compressed again when
    it is too long). True if the summary stays."""
    if not session.context_summary or session.context_cut_to in path:
        return True
    session.context_summary, session.context_head_to, session.context_cut_to = "", None, None
    models.ChatSession.drop_summary(session.pk)
    return False


def choose(session: ChatSession, message_id: int) -> int:
    """Show the version holding message `message_id` and what followed it; returns the new leaf."""
    tree = Tree.load(session.pk)
    if message_id not in tree.parents:
        raise VersionError("That message is not part of this chat.")
    leaf = tree.newest_below(message_id)
    stored = None if leaf == max(tree.parents) else leaf
    keep_summary(session, tree.path(leaf))
    models.ChatSession.choose_leaf(session.pk, stored)
    session.leaf_id = stored
    session.revision += 1
    return leaf


def show(session: ChatSession, message_id: int) -> bool:
    """Make sure message `message_id` is shown: its version is chosen if another one is (a search
    hit in another version opens the chat on it). True if the version shown changed."""
    tree = Tree.load(session.pk)
    if message_id not in tree.parents:
        raise VersionError("That message is not part of this chat.")
    if message_id in tree.path(tree.leaf(session.leaf_id)):
        return False
    choose(session, message_id)
    return True


def step(session: ChatSession, message_id: int, by: int) -> int:
    """Show the version `by` places after (negative: before) the one holding `message_id`; the
    id of the version now shown."""
    tree = Tree.load(session.pk)
    if message_id not in tree.parents:
        raise VersionError("That message is not part of this chat.")
    versions = tree.siblings(message_id)
    at = versions.index(message_id) + by
    if not 0 <= at < len(versions):
        raise VersionError(f"There is no version {at + 1} of this message: it has {len(versions)}.")
    choose(session, versions[at])
    return versions[at]


@dataclass(frozen=True)
class Position:
    """Which version of its turn a message is: `index` of `count` (from 1), with its neighbours."""

    index: int
    count: int
    previous: int | None
    following: int | None


def positions(tree: Tree, path: list[int]) -> dict[int, Position]:
    """For each message of `path` that has other versions, where it stands among them."""
    found: dict[int, Position] = {}
    for pk in path:
        versions = tree.siblings(pk)
        if len(versions) > 1:
            at = versions.index(pk)
            before = versions[at - 1] if at > 0 else None
            after = versions[at + 1] if at + 1 < len(versions) else None
            found[pk] = Position(at + 1, len(versions), before, after)
    return found
