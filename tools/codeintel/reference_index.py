"""Who uses which names across many files, kept up to date file by file: the repo map ranking's input."""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Mapping

from keel.tools.codeintel.tags import Definition, FileTags

NOT_NAMES = frozenset({"impl"})  # containers whose "name" is another definition's
_PACKAGE_FILE_STEMS = frozenset(
    {"__init__", "index", "mod", "lib", "main"}
)  # named by their directory
_MOST_WORDS_COLLECTED_ONE_BY_ONE = 64  # beyond this many, one pass over all files is cheaper


def file_words(rel: str) -> tuple[str, ...]:
    """Words whose mention in another file suggests it imports `rel`: module and directory names."""
    directory, _, filename = rel.rpartition("/")
    stem = filename.split(".", 1)[0]
    words = {directory.rpartition("/")[2]}
    if stem not in _PACKAGE_FILE_STEMS:
        words.add(stem)
    return tuple(sorted(word for word in words if word))


def is_rankable(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__"))


def _parent_positions(definitions: tuple[Definition, ...]) -> list[int]:
    """For each definition, the position of the one directly enclosing it, or -1."""
    result: list[int] = []
    open_positions: list[int] = []
    for position, definition in enumerate(definitions):
        while open_positions and definitions[open_positions[-1]].depth >= definition.depth:
            open_positions.pop()
        result.append(open_positions[-1] if open_positions else -1)
        open_positions.append(position)
    return result


class ReferenceIndex:
    """Users of each tracked word, definers and definitions of each name, files per directory.

    Tracked words are the names defined somewhere plus module and directory names: a fraction of
    all the words files use. `sync` re-counts only files whose tags object changed (cached tags
    keep their identity), and within a changed file only the words whose count changed, so after
    one edit the index costs about one file's worth of work. Every change to a word's users or
    definers, or to a directory's files, gets a new stamp in `version`, which is what lets the
    ranking reuse scores it computed before (`scores`, per file and definition position).
    """

    def __init__(self) -> None:
        self.users: dict[str, dict[str, float]] = {}  # word -> {file using it: sqrt(its uses)}
        self.use_mass: dict[str, float] = {}  # word -> sum over its users (fsum: order-free)
        self.definers: dict[str, int] = {}  # name -> how many files define it
        self.by_name: dict[str, set[tuple[str, int]]] = {}  # (file, position) of each definition
        self.parent: dict[str, list[int]] = {}  # per file: enclosing definition's position, or -1
        self.words: dict[str, tuple[str, ...]] = {}  # per file: its file_words
        self.directory_files: dict[str, set[str]] = {}
        self.version: dict[str, int] = {}  # word or "/" + directory -> stamp of its last change
        self.epoch = 0  # bumped when everything was counted afresh
        self.scores: dict[str, dict[int, tuple[tuple[int, ...], float]]] = {}  # owned by ranking
        self._tracked: dict[str, int] = {}  # word -> how many reasons to track it
        self._tags: dict[str, FileTags] = {}
        self._clock = itertools.count(1)

    def sync(self, tags_by_file: Mapping[str, FileTags]) -> None:
        old = self._tags
        leaving = {rel: tags for rel, tags in old.items() if tags_by_file.get(rel) is not tags}
        arriving = {rel: tags for rel, tags in tags_by_file.items() if old.get(rel) is not tags}
        if not leaving and not arriving:
            return
        was_tracked: dict[str, bool] = {}  # for each word whose tracking changes: before the sync?
        definers_before: dict[str, int] = {}
        for rel, tags in leaving.items():
            self._count_file(rel, tags, -1, was_tracked, definers_before)
            self.scores.pop(rel, None)
        for rel, tags in arriving.items():
            self._count_file(rel, tags, 1, was_tracked, definers_before)
        for rel in leaving.keys() ^ arriving.keys():  # files that came or went
            self.version["/" + rel.rpartition("/")[0]] = next(self._clock)
        self._tags = dict(tags_by_file)
        changed = {
            name for name, count in definers_before.items() if self.definers.get(name, 0) != count
        }
        newly_tracked: set[str] = set()
        for word, was in was_tracked.items():
            if was and word not in self._tracked:
                self.users.pop(word, None)
                changed.add(word)
            elif not was and word in self._tracked:
                newly_tracked.add(word)
        if len(newly_tracked) > _MOST_WORDS_COLLECTED_ONE_BY_ONE:
            self._count_all_uses()
            return
        for rel in sorted(leaving.keys() | arriving.keys()):
            self._update_uses(rel, leaving.get(rel), arriving.get(rel), newly_tracked, changed)
        for word in newly_tracked:
            users = {
                rel: math.sqrt(tags.references[word])
                for rel, tags in self._tags.items()
                if word in tags.references
            }
            if users:
                self.users[word] = users
        self._restamp(changed | newly_tracked)

    def _restamp(self, words: Collection[str]) -> None:
        for word in words:
            users = self.users.get(word)
            if users:
                self.use_mass[word] = math.fsum(users.values())
            else:
                self.use_mass.pop(word, None)
            self.version[word] = next(self._clock)

    def _count_all_uses(self) -> None:
        self.users = {}
        tracked = self._tracked.keys()
        for rel, tags in self._tags.items():
            references = tags.references
            for word in references.keys() & tracked:
                self.users.setdefault(word, {})[rel] = math.sqrt(references[word])
        self.use_mass = {word: math.fsum(users.values()) for word, users in self.users.items()}
        self.epoch = next(self._clock)
        self.scores.clear()

    def _update_uses(
        self,
        rel: str,
        before: FileTags | None,
        after: FileTags | None,
        skip: Collection[str],
        changed: set[str],
    ) -> None:
        """Apply one file's change of uses to the tracked words whose count in it changed."""
        old = before.references if before is not None else {}
        new = after.references if after is not None else {}
        for word in (old.keys() | new.keys()) & self._tracked.keys():
            count = new.get(word)
            if word in skip or old.get(word) == count:
                continue
            changed.add(word)
            if count is not None:
                self.users.setdefault(word, {})[rel] = math.sqrt(count)
                continue
            users = self.users.get(word)
            if users is not None:
                users.pop(rel, None)
                if not users:
                    del self.users[word]

    def _track(self, word: str, sign: int, was_tracked: dict[str, bool]) -> None:
        if word not in was_tracked:
            was_tracked[word] = word in self._tracked
        reasons = self._tracked.get(word, 0) + sign
        if reasons > 0:
            self._tracked[word] = reasons
        else:
            self._tracked.pop(word, None)

    def _count_file(
        self,
        rel: str,
        tags: FileTags,
        sign: int,
        was_tracked: dict[str, bool],
        definers_before: dict[str, int],
    ) -> None:
        definers = self.definers
        for name in {d.name for d in tags.definitions if d.kind not in NOT_NAMES}:
            self._track(name, sign, was_tracked)
            definers_before.setdefault(name, definers.get(name, 0))
            total_files = definers.get(name, 0) + sign
            if total_files > 0:
                definers[name] = total_files
            else:
                definers.pop(name, None)
        for position, definition in enumerate(tags.definitions):
            if not is_rankable(definition.name):
                continue
            places = self.by_name.setdefault(definition.name, set())
            if sign > 0:
                places.add((rel, position))
            else:
                places.discard((rel, position))
                if not places:
                    del self.by_name[definition.name]
        words = file_words(rel)
        for word in words:
            self._track(word, sign, was_tracked)
        directory = rel.rpartition("/")[0]
        neighbours = self.directory_files.setdefault(directory, set())
        if sign > 0:
            self.parent[rel] = _parent_positions(tags.definitions)
            self.words[rel] = words
            neighbours.add(rel)
        else:
            self.parent.pop(rel, None)
            self.words.pop(rel, None)
            neighbours.discard(rel)
