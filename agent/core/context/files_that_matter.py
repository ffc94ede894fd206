"""A project too big to give a small model whole: the files that matter for its task instead — those defining
the identifiers the task names, then the repo map's ranked files — up to a share of the context window."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from keel.agent.core.context.small_project import ProjectFile
from keel.agent.core.repo_files import read_inside
from keel.tools.codeintel.ranking import RankedDefinition, rank_definitions
from keel.tools.codeintel.reference_index import ReferenceIndex
from keel.tools.codeintel.repo_map import CHARS_PER_TOKEN
from keel.tools.codeintel.source_files import discover
from keel.tools.codeintel.tag_cache import TagCache
from keel.tools.codeintel.tags import FileTags

WINDOW_SHARE = 0.25  # of the context window, for the files given with the task
MAX_SOURCES = (
    400  # a larger project is for the model's own search: parsing it would hold up the start
)
RANKED_DEFINITIONS = 200
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_ENDINGS = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def share_of_window(window_tokens: int, share: float = WINDOW_SHARE) -> int:
    """How many characters of files a window of this many tokens takes with the task."""
    return int(window_tokens * share * CHARS_PER_TOKEN)


def task_identifiers(task: str) -> set[str]:
    """The words of a task that may name code (`slugify`, `TextUtil.render` gives both parts), 3+ characters."""
    return set(_WORD.findall(task))


def word_stem(word: str) -> str:
    """A word without its plural or -ing/-ed ending, lower case: "Slugs" and "Wrapping" name slug.py and
    wrap.py (a rough rule: it only has to make a word and a file's name meet)."""
    word = word.lower()
    for ending, instead in _ENDINGS:
        if len(word) > len(ending) + 2 and word.endswith(ending):
            word = word[: -len(ending)] + instead
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # "wrapp" of wrapping
    return word[:-1] if len(word) > 3 and word.endswith("e") else word  # "tabl" of table and tables


def names_file(path: str, names: set[str], stems: set[str]) -> bool:
    """Whether one of the words `names` (their `word_stem`s in `stems`) names the file: `textutil` names
    textutil.py, `slugs` slug.py."""
    stem = PurePosixPath(path).stem
    return stem in names or word_stem(stem) in stems


def files_named_by(files: Iterable[str], task: str) -> list[str]:
    """The files a task's words name (`names_file`), in the order given."""
    names = task_identifiers(task)
    stems = {word_stem(name) for name in names}
    return [path for path in files if names_file(path, names, stems)]


def defining_files(tags_by_file: Mapping[str, FileTags], names: set[str]) -> list[str]:
    """Files that define one of the names, or are named by one (`names_file`); those matching more names
    first, then by path."""
    hits: dict[str, int] = {}
    stems = {word_stem(name) for name in names}
    for rel, tags in tags_by_file.items():
        defined = {definition.name for definition in tags.definitions} & names
        named = names_file(rel, names, stems)
        if defined or named:
            hits[rel] = len(defined) + named
    return sorted(hits, key=lambda rel: (-hits[rel], rel))


def ranked_files(ranked: Iterable[RankedDefinition]) -> list[str]:
    """The files of ranked definitions, each once, in the order of their best definition."""
    return list(dict.fromkeys(definition.rel for definition in ranked))


def read_up_to(root: Path, ordered: Iterable[str], limit: int) -> list[ProjectFile]:
    """The files in order while their text fits in `limit` characters (one that would not is left out, a
    smaller one after it may still fit); binary and non-UTF-8 files are left out."""
    chosen: list[ProjectFile] = []
    total = 0
    for rel in dict.fromkeys(ordered):
        data = read_inside(root, rel)
        if data is None or b"\x00" in data or total + len(data) > limit:
            continue
        try:
            chosen.append(ProjectFile(path=rel, text=data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
        total += len(data)
    return chosen


def files_that_matter(root: Path, task: str, limit: int) -> list[ProjectFile]:
    """The source files a task most likely needs, up to `limit` characters; [] for a project with no
    source files a grammar reads, or too many to parse at the start."""
    sources = discover(root, root)
    if not sources or len(sources) > MAX_SOURCES:
        return []
    tags_by_file = TagCache(None, workers=1).tags(sources)
    named = defining_files(tags_by_file, task_identifiers(task))
    index = ReferenceIndex()
    index.sync(tags_by_file)
    ranked = rank_definitions(tags_by_file, index, in_play=named, limit=RANKED_DEFINITIONS)
    return read_up_to(root, [*named, *ranked_files(ranked)], limit)
