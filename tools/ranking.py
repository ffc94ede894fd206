"""Which definitions matter most: use counts from other files, kept up to date file by file, ranked top-k."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from tools.tags import Definition, FileTags

IN_PLAY_REFERRER_WEIGHT = 10.0  # uses from files the agent touched say what matters now
IN_PLAY_DEFINER_WEIGHT = 2.0
PRIVATE_NAME_WEIGHT = 0.1  # `_name` is meant for its own module
TEST_DEFINER_WEIGHT = 0.2  # tests use the code; their own helpers and fixtures are rarely the point
_MOST_BOOST = IN_PLAY_DEFINER_WEIGHT
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec)/"
    r"|(^|/)(test_[^/]*|conftest\.py|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+)$"
)
_NOT_NAMES = frozenset({"impl"})  # containers whose "name" is another definition's
_TRANSPARENT_SCOPES = frozenset({"module"})  # namespaces: their members are used without them


@dataclass(frozen=True, slots=True)
class RankedDefinition:
    rel: str
    index: int  # position in the file's definitions, for finding its enclosing ones
    definition: Definition
    score: float


def is_test_path(rel: str) -> bool:
    return _TEST_PATH.search(rel) is not None


def _is_rankable(name: str) -> bool:
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
    """Use mass per name, definers per name and definitions by name, over a set of files.

    `sync` re-counts only files whose tags object changed (cached tags keep their identity), so
    after one edit the index costs one file's worth of work.
    """

    def __init__(self) -> None:
        self.use_mass: dict[str, float] = {}  # sum over files of sqrt(uses in that file)
        self.definers: dict[str, int] = {}  # files defining the name
        self.by_name: dict[str, set[tuple[str, int]]] = {}  # (file, position) of each definition
        self.parent: dict[str, list[int]] = {}  # per file: enclosing definition's position, or -1
        self._tags: dict[str, FileTags] = {}

    def sync(self, tags_by_file: Mapping[str, FileTags]) -> None:
        for rel, tags in self._tags.items():
            if tags_by_file.get(rel) is not tags:
                self._count(rel, tags, -1)
        for rel, tags in tags_by_file.items():
            if self._tags.get(rel) is not tags:
                self._count(rel, tags, 1)
        self._tags = dict(tags_by_file)

    def _count(self, rel: str, tags: FileTags, sign: int) -> None:
        mass, definers = self.use_mass, self.definers
        for name, count in tags.references.items():
            total = mass.get(name, 0.0) + sign * math.sqrt(count)
            if total > 1e-9:
                mass[name] = total
            else:
                mass.pop(name, None)
        for name in {d.name for d in tags.definitions if d.kind not in _NOT_NAMES}:
            total_files = definers.get(name, 0) + sign
            if total_files > 0:
                definers[name] = total_files
            else:
                definers.pop(name, None)
        for position, definition in enumerate(tags.definitions):
            if not _is_rankable(definition.name):
                continue
            places = self.by_name.setdefault(definition.name, set())
            if sign > 0:
                places.add((rel, position))
            else:
                places.discard((rel, position))
                if not places:
                    del self.by_name[definition.name]
        if sign > 0:
            self.parent[rel] = _parent_positions(tags.definitions)
        else:
            self.parent.pop(rel, None)


class _Scorer:
    """Scores of definitions for one ranking: the index plus the uses from files in play."""

    def __init__(
        self, tags_by_file: Mapping[str, FileTags], index: ReferenceIndex, playing: set[str]
    ) -> None:
        self.tags_by_file, self.index, self.playing = tags_by_file, index, playing
        self.extra_mass: dict[str, float] = {}
        for rel in sorted(playing):
            for name, count in tags_by_file[rel].references.items():
                extra = (IN_PLAY_REFERRER_WEIGHT - 1.0) * math.sqrt(count)
                self.extra_mass[name] = self.extra_mass.get(name, 0.0) + extra
        self._caps: dict[tuple[str, int], float] = {}

    def _raw(self, rel: str, definition: Definition) -> float:
        name = definition.name
        if not _is_rankable(name):
            return 0.0
        mass = self.index.use_mass.get(name, 0.0) + self.extra_mass.get(name, 0.0)
        own = self.tags_by_file[rel].references.get(name)
        if own:  # uses within the defining file do not count
            mass -= (IN_PLAY_REFERRER_WEIGHT if rel in self.playing else 1.0) * math.sqrt(own)
        score = max(mass, 0.0) / self.index.definers.get(name, 1)
        return score * PRIVATE_NAME_WEIGHT if name.startswith("_") else score

    def _cap(self, rel: str, position: int) -> float:
        """The most a member of definitions[position] may score: its own score, and its containers'."""
        key = (rel, position)
        if key not in self._caps:
            definition = self.tags_by_file[rel].definitions[position]
            cap = math.inf if definition.kind in _TRANSPARENT_SCOPES else self._raw(rel, definition)
            outer = self.index.parent[rel][position]
            self._caps[key] = min(cap, self._cap(rel, outer)) if outer >= 0 else cap
        return self._caps[key]

    def score(self, rel: str, position: int) -> float:
        score = self._raw(rel, self.tags_by_file[rel].definitions[position])
        outer = self.index.parent[rel][position]
        if outer >= 0:
            score = min(score, self._cap(rel, outer))
        if rel in self.playing:
            score *= IN_PLAY_DEFINER_WEIGHT
        if is_test_path(rel):
            score *= TEST_DEFINER_WEIGHT
        return round(score, 9)


def rank_definitions(
    tags_by_file: Mapping[str, FileTags],
    index: ReferenceIndex,
    in_play: Collection[str] = (),
    limit: int = 1000,
) -> list[RankedDefinition]:
    """The `limit` definitions most used from other files, best first (`index` synced to the files).

    A definition's score is the use mass of its name from other files (sqrt(uses) per file),
    shared among the files defining that name (a name defined in many files says little about
    each). Uses from files in play weigh more, and so do definitions in them; definitions in
    test files weigh less. A member scores at most what its container does, so a common method
    name (`x.text`) does not lift a class nobody names. Unused top-level definitions fill any
    room left, by path. Ties fall back to path and line, so the order is stable.

    Names are visited in order of the most any of their definitions could score, stopping once
    that bound falls below the `limit`-th best score found: the result is that of scoring every
    definition, at the cost of scoring the few near the top.
    """
    scorer = _Scorer(tags_by_file, index, set(in_play) & tags_by_file.keys())
    mass, extra, definers = index.use_mass, scorer.extra_mass, index.definers
    queue = [  # (-bound, name): no definition of the name scores more than bound
        (
            -(mass.get(name, 0.0) + extra.get(name, 0.0)) / definers.get(name, 1) * _MOST_BOOST
            * (PRIVATE_NAME_WEIGHT if name[0] == "_" else 1.0),
            name,
        )
        for name in index.by_name
    ]
    heapq.heapify(queue)
    found: list[tuple[float, str, int]] = []
    best_scores: list[float] = []  # min-heap of the `limit` best scores so far
    while queue:
        negative_bound, name = heapq.heappop(queue)
        bound = round(-negative_bound, 9)
        if bound <= 0.0 or (len(best_scores) >= limit and bound < best_scores[0]):
            break
        for rel, position in index.by_name[name]:
            score = scorer.score(rel, position)
            if score <= 0.0:
                continue
            found.append((-score, rel, position))
            if len(best_scores) < limit:
                heapq.heappush(best_scores, score)
            elif score > best_scores[0]:
                heapq.heapreplace(best_scores, score)
    found.sort()
    del found[limit:]
    if len(found) < limit:
        chosen = {(rel, position) for _, rel, position in found}
        for rel in sorted(tags_by_file):
            for position, definition in enumerate(tags_by_file[rel].definitions):
                if len(found) >= limit:
                    break
                if definition.depth == 0 and (rel, position) not in chosen:
                    found.append((0.0, rel, position))
    return [
        RankedDefinition(rel, position, tags_by_file[rel].definitions[position], abs(negative))
        for negative, rel, position in found
    ]
