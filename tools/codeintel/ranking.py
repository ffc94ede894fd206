"""Which definitions matter most: uses from files that plausibly import them, ranked top-k."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from keel.tools.codeintel.reference_index import ReferenceIndex, is_rankable
from keel.tools.codeintel.tags import Definition, FileTags

IN_PLAY_REFERRER_WEIGHT = 10.0  # uses from files the agent touched say what matters now
IN_PLAY_DEFINER_WEIGHT = 2.0
PRIVATE_NAME_WEIGHT = 0.1  # `_name` is meant for its own module
TEST_DEFINER_WEIGHT = 0.2  # tests use the code; their own helpers and fixtures are rarely the point
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec)/"
    r"|(^|/)(test_[^/]*|conftest\.py|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+)$"
)
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type"})
_TRANSPARENT_SCOPES = frozenset({"module"})  # namespaces: their members are used without them


@dataclass(frozen=True, slots=True)
class RankedDefinition:
    rel: str
    index: int  # position in the file's definitions, for finding its enclosing ones
    definition: Definition
    score: float


def is_test_path(rel: str) -> bool:
    return _TEST_PATH.search(rel) is not None


def _squashed(word: str) -> str:
    return word.replace("_", "").replace("-", "").lower()


def _evidence_words(words: tuple[str, ...], definition: Definition) -> tuple[str, ...] | None:
    """The words whose mention in a file marks its use of the name as meaning this definition.

    Those are the module and directory names of the defining file (imports name them). A type
    named like its file (`ShoppingCart` in shopping_cart.rb) is taken to mean that file wherever
    it is used (None); a function named like its file (`def http` in http.py) needs its
    directory named, since naming the function names the file too.
    """
    squashed = _squashed(definition.name)
    if not any(_squashed(word) == squashed for word in words):
        return words
    if definition.kind in _TYPE_KINDS and definition.name[:1].isupper():
        return None
    return tuple(word for word in words if _squashed(word) != squashed)


class _Scorer:
    """Scores of definitions for one ranking: the index's users plus the weight of files in play."""

    def __init__(
        self, tags_by_file: Mapping[str, FileTags], index: ReferenceIndex, playing: set[str]
    ) -> None:
        self.tags_by_file, self.index, self.playing = tags_by_file, index, playing
        self._caps: dict[tuple[str, int], float] = {}

    def _is_evidence(self, user: str, rel: str, words: tuple[str, ...]) -> bool:
        if user.rpartition("/")[0] == rel.rpartition("/")[0]:
            return True
        return any(user in self.index.users.get(word, ()) for word in words)

    def _uses(self, rel: str, words: tuple[str, ...] | None, users: dict[str, float]) -> float:
        """Use mass from other files that plausibly import `rel` (the part kept between rankings)."""
        if words is None:
            counted: Collection[str] = users.keys()
        else:
            evidence = set(self.index.directory_files.get(rel.rpartition("/")[0], ()))
            for word in words:
                evidence.update(self.index.users.get(word, ()))
            counted = users.keys() & evidence  # C iterates the smaller side
        mass = math.fsum(users[user] for user in counted if user != rel)
        return mass

    def _raw(self, rel: str, position: int, definition: Definition) -> float:
        name = definition.name
        users = self.index.users.get(name)
        if not users or not is_rankable(name):
            return 0.0
        words = _evidence_words(self.index.words[rel], definition)
        index = self.index
        stamp = (
            index.epoch,
            index.version.get(name, 0),
            index.version.get("/" + rel.rpartition("/")[0], 0),
            *(index.version.get(word, 0) for word in words or ()),
        )
        kept = index.scores.setdefault(rel, {}).get(position)
        if kept is not None and kept[0] == stamp:
            mass = kept[1]
        else:
            mass = self._uses(rel, words, users)
            index.scores[rel][position] = (stamp, mass)
        for user in self.playing:
            if (
                user != rel
                and user in users
                and (words is None or self._is_evidence(user, rel, words))
            ):
                mass += users[user] * (IN_PLAY_REFERRER_WEIGHT - 1.0)
        score = mass / index.definers.get(name, 1)
        return score * PRIVATE_NAME_WEIGHT if name.startswith("_") else score

    def _cap(self, rel: str, position: int) -> float:
        """The most a member of definitions[position] may score: its own score, and its containers'."""
        key = (rel, position)
        if key not in self._caps:
            definition = self.tags_by_file[rel].definitions[position]
            cap = math.inf
            if definition.kind not in _TRANSPARENT_SCOPES:
                cap = self._raw(rel, position, definition)
            outer = self.index.parent[rel][position]
            self._caps[key] = min(cap, self._cap(rel, outer)) if outer >= 0 else cap
        return self._caps[key]

    def score(self, rel: str, position: int) -> float:
        score = self._raw(rel, position, self.tags_by_file[rel].definitions[position])
        outer = self.index.parent[rel][position]
        if outer >= 0:
            score = min(score, self._cap(rel, outer))
        if rel in self.playing:
            score *= IN_PLAY_DEFINER_WEIGHT
        if is_test_path(rel):
            score *= TEST_DEFINER_WEIGHT
        return round(score, 9)


def _without_overloads(
    found: list[tuple[float, str, int]], tags_by_file: Mapping[str, FileTags], index: ReferenceIndex
) -> list[tuple[float, str, int]]:
    """The first of several same-named definitions in one scope (overloads, redefinitions)."""
    seen: set[tuple[str, str, int]] = set()
    kept: list[tuple[float, str, int]] = []
    for item in found:
        _, rel, position = item
        key = (rel, tags_by_file[rel].definitions[position].name, index.parent[rel][position])
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _bounds(
    index: ReferenceIndex, tags_by_file: Mapping[str, FileTags], playing: set[str]
) -> list[tuple[float, str]]:
    """(-bound, name) for every defined name something uses: no definition of it scores more."""
    extra: dict[str, float] = {}
    for rel in sorted(playing):
        for name, count in tags_by_file[rel].references.items():
            extra[name] = extra.get(name, 0.0) + (IN_PLAY_REFERRER_WEIGHT - 1.0) * math.sqrt(count)
    most = IN_PLAY_DEFINER_WEIGHT if playing else 1.0
    definers = index.definers
    return [
        (
            -(mass + extra.get(name, 0.0))
            / definers[name]
            * most
            * (PRIVATE_NAME_WEIGHT if name[0] == "_" else 1.0),
            name,
        )
        for name, mass in index.use_mass.items()
        if name in definers
    ]


def rank_definitions(
    tags_by_file: Mapping[str, FileTags],
    index: ReferenceIndex,
    in_play: Collection[str] = (),
    limit: int = 1000,
) -> list[RankedDefinition]:
    """The `limit` definitions most used from other files, best first (`index` synced to the files).

    A definition's score is the use mass of its name (sqrt(uses) per file) from other files that
    plausibly import it (they name its module or directory, or sit beside it), shared among the
    files defining that name (a name defined in many files says little about each). Uses from
    files in play weigh more, and so do definitions in them; definitions in test files weigh
    less. A member scores at most what its container does, so a common method name (`x.text`)
    does not lift a class nobody names. Unused top-level definitions fill any room left, by
    path. Ties fall back to path and line, so the order is stable.

    Names are visited in order of the most any of their definitions could score, stopping once
    that bound falls below the `limit`-th best score found: the result is that of scoring every
    definition, at the cost of scoring those near the top (and scores whose inputs did not
    change since the last ranking are reused).
    """
    playing = set(in_play) & tags_by_file.keys()
    scorer = _Scorer(tags_by_file, index, playing)
    queue = _bounds(index, tags_by_file, playing)
    heapq.heapify(queue)
    found: list[tuple[float, str, int]] = []
    best_scores: list[float] = []  # min-heap of the `limit` best scores so far
    while queue:
        negative_bound, name = heapq.heappop(queue)
        bound = round(-negative_bound, 9)
        if bound <= 0.0 or (len(best_scores) >= limit and bound < best_scores[0]):
            break
        for rel, position in index.by_name.get(name, ()):
            score = scorer.score(rel, position)
            if score <= 0.0:
                continue
            found.append((-score, rel, position))
            if len(best_scores) < limit:
                heapq.heappush(best_scores, score)
            elif score > best_scores[0]:
                heapq.heapreplace(best_scores, score)
    found.sort()
    found = _without_overloads(found, tags_by_file, index)
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
