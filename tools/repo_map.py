"""Outlines and the ranked repo map: which definitions matter most, fitted to a token budget (pure functions)."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from tools.tags import Definition, FileTags

CHARS_PER_TOKEN = 4
IN_PLAY_REFERRER_WEIGHT = 10.0  # uses from files the agent touched say what matters now
IN_PLAY_DEFINER_WEIGHT = 2.0
PRIVATE_NAME_WEIGHT = 0.1  # `_name` is meant for its own module
TEST_DEFINER_WEIGHT = 0.2  # tests use the code; their own helpers and fixtures are rarely the point
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)(test_[^/]*|conftest\.py|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+)$"
)
_NOT_NAMES = frozenset({"impl"})  # containers whose "name" is another definition's
_SHORTEST_LINE = 8  # "  1: x=1" and a newline
_TRANSPARENT_SCOPES = frozenset({"module"})  # namespaces: their members are used without them


@dataclass(frozen=True, slots=True)
class RankedDefinition:
    rel: str
    index: int  # position in the file's definitions, for finding its enclosing ones
    definition: Definition
    score: float


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def outline_line(definition: Definition) -> str:
    return f"{'  ' * (definition.depth + 1)}{definition.line}: {definition.signature}"


def render_outline(rel: str, definitions: Sequence[Definition]) -> str:
    """A file's definitions in source order, nested ones indented under their container."""
    if not definitions:
        return f"{rel}\n  (no definitions)"
    return "\n".join([rel, *(outline_line(definition) for definition in definitions)])


def parents(definitions: Sequence[Definition], index: int) -> list[int]:
    """Indexes of the definitions enclosing definitions[index], outermost first."""
    chain: list[int] = []
    depth = definitions[index].depth
    for at in range(index - 1, -1, -1):
        if depth == 0:
            break
        if definitions[at].depth < depth:
            chain.append(at)
            depth = definitions[at].depth
    return chain[::-1]


def _is_rankable(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__"))


class ReferenceIndex:
    """How much each name is used, and by how many files it is defined, over a set of files.

    Kept up to date file by file: `sync` re-counts only files whose tags object changed, so after
    one edit the index costs one file's worth of work.
    """

    def __init__(self) -> None:
        self.use_mass: dict[str, float] = {}  # sum over files of sqrt(uses in that file)
        self.definers: dict[str, int] = {}
        self._tags: dict[str, FileTags] = {}

    def sync(self, tags_by_file: Mapping[str, FileTags]) -> None:
        for rel, tags in self._tags.items():
            if tags_by_file.get(rel) is not tags:
                self._count(tags, -1)
        for rel, tags in tags_by_file.items():
            if self._tags.get(rel) is not tags:
                self._count(tags, 1)
        self._tags = dict(tags_by_file)

    def _count(self, tags: FileTags, sign: int) -> None:
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


def rank_definitions(
    tags_by_file: Mapping[str, FileTags],
    index: ReferenceIndex,
    in_play: Collection[str] = (),
    limit: int | None = None,
) -> list[RankedDefinition]:
    """The `limit` definitions most used from other files, best first (index must be synced).

    A definition's score is the use mass of its name from other files (sqrt(uses) per file),
    shared among the files defining that name (a name defined in many files says little about
    each). Uses from files in play weigh more, and so do definitions in them; definitions in
    test files weigh less. A member scores at most what its container does, so a common method
    name (`x.text`) does not lift a class nobody names. Ties fall back to path and line.
    """
    playing = set(in_play) & tags_by_file.keys()
    extra_mass: dict[str, float] = {}
    for rel in sorted(playing):
        for name, count in tags_by_file[rel].references.items():
            extra = (IN_PLAY_REFERRER_WEIGHT - 1.0) * math.sqrt(count)
            extra_mass[name] = extra_mass.get(name, 0.0) + extra
    use_mass, definers = index.use_mass, index.definers
    scored: list[tuple[float, str, int]] = []
    for rel, tags in tags_by_file.items():
        references = tags.references
        own_weight = IN_PLAY_REFERRER_WEIGHT if rel in playing else 1.0
        boost = IN_PLAY_DEFINER_WEIGHT if rel in playing else 1.0
        if _TEST_PATH.search(rel):
            boost *= TEST_DEFINER_WEIGHT
        open_scores: list[tuple[int, float]] = []  # (depth, score) of enclosing definitions
        for position, definition in enumerate(tags.definitions):
            name = definition.name
            score = 0.0
            if _is_rankable(name):
                mass = use_mass.get(name, 0.0) + extra_mass.get(name, 0.0)
                own = references.get(name)
                if own:
                    mass -= own_weight * math.sqrt(own)
                score = max(mass, 0.0) / definers.get(name, 1)
                if name.startswith("_"):
                    score *= PRIVATE_NAME_WEIGHT
            while open_scores and open_scores[-1][0] >= definition.depth:
                open_scores.pop()
            if open_scores:
                score = min(score, open_scores[-1][1])
            cap = math.inf if definition.kind in _TRANSPARENT_SCOPES else score
            open_scores.append((definition.depth, min(cap, open_scores[-1][1]) if open_scores else cap))
            if score > 0.0 or definition.depth == 0:  # unused top-level ones fill leftover room
                scored.append((-round(score * boost, 9), rel, position))
    best = sorted(scored) if limit is None else heapq.nsmallest(limit, scored)
    return [
        RankedDefinition(rel, position, tags_by_file[rel].definitions[position], -negative)
        for negative, rel, position in best
    ]


def _render_selection(
    selection: Sequence[RankedDefinition], tags_by_file: Mapping[str, FileTags]
) -> str:
    """The chosen definitions grouped by file (files in rank order), each with its containers."""
    chosen: dict[str, set[int]] = {}
    for item in selection:
        indexes = chosen.setdefault(item.rel, set())
        indexes.add(item.index)
        indexes.update(parents(tags_by_file[item.rel].definitions, item.index))
    blocks: list[str] = []
    for rel, indexes in chosen.items():
        definitions = tags_by_file[rel].definitions
        blocks.append("\n".join([rel, *(outline_line(definitions[i]) for i in sorted(indexes))]))
    return "\n".join(blocks)


def most_that_fit(budget_chars: int) -> int:
    """An upper bound on how many definitions a map of `budget_chars` can show."""
    return max(budget_chars // _SHORTEST_LINE, 1)


def fit_map(
    ranked: Sequence[RankedDefinition], tags_by_file: Mapping[str, FileTags], budget_chars: int
) -> tuple[str, int]:
    """The longest prefix of the ranking whose rendering fits the budget, and how many it holds."""
    low, high = 0, min(len(ranked), most_that_fit(budget_chars))
    best = ""
    while low < high:
        middle = (low + high + 1) // 2
        text = _render_selection(ranked[:middle], tags_by_file)
        if len(text) <= budget_chars:
            low, best = middle, text
        else:
            high = middle - 1
    return best, low
