"""The `code_map` tool: a file's outline, a ranked map of a tree's key definitions, or where a symbol lives."""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from pathlib import Path

import platformdirs
from pydantic import Field

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.codeintel.languages import language_for
from keel.tools.codeintel.ranking import RankedDefinition, rank_definitions
from keel.tools.codeintel.reference_index import ReferenceIndex
from keel.tools.codeintel.repo_map import CHARS_PER_TOKEN, fit_map, most_that_fit, render_outline
from keel.tools.codeintel.source_files import MAX_FILE_BYTES, SourceFile, discover
from keel.tools.codeintel.symbol_query import SymbolQuery, find_definitions, find_uses, render_query
from keel.tools.codeintel.tag_cache import TagCache
from keel.tools.codeintel.tags import FileTags, supports

MAP_TOKENS = 2_000
OUTLINE_TOKENS = 4_000
_READABLE = ".py .js .ts .tsx .go .rs .java .c .h .cpp .hpp .rb .sh"


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("keel")) / "code_map"


class CodeMapArgs(ToolArgs):
    path: str = Field(
        default=".",
        description="File or directory relative to the workspace root. A file: its outline "
        "(classes, functions with signatures and line numbers). A directory: a map of its most "
        "referenced definitions, or the full outline when the directory is small.",
    )
    query: str | None = Field(
        default=None,
        description="A symbol name, e.g. 'parse_args' or 'Session.submit': where it is defined "
        "(file:line and signature) and where it is used (file:line and the line), under path.",
    )


class CodeMapTool(Tool[CodeMapArgs]):
    name = "code_map"
    kind = ToolKind.READ
    description = (
        "Code structure from tree-sitter (Python, JS/TS, Go, Rust, Java, C/C++, Ruby, shell). "
        "path=FILE: outline with signatures and line numbers. path=DIR (default '.'): ranked map "
        "of the definitions other files use most, favouring files you read or changed. "
        "query=NAME: where a symbol is defined and used. Cheaper than reading whole files."
    )
    Args = CodeMapArgs

    def __init__(
        self,
        map_tokens: int = MAP_TOKENS,
        outline_tokens: int = OUTLINE_TOKENS,
        cache_dir: Path | None = None,
        use_disk_cache: bool = True,
        workers: int | None = None,
    ) -> None:
        self.map_tokens = map_tokens
        self.outline_tokens = outline_tokens
        self.cache_dir = cache_dir if cache_dir is not None else default_cache_dir()
        self.use_disk_cache = use_disk_cache
        self.workers = workers
        self._caches: dict[Path, TagCache] = {}
        self._indexes: dict[Path, ReferenceIndex] = {}
        self._ranking: tuple[object, list[RankedDefinition]] | None = None
        self._lock = threading.Lock()

    def cache_for(self, root: Path) -> TagCache:
        """The tag cache of one workspace (its `parses` counter shows what was re-parsed)."""
        if root not in self._caches:
            disk_path = None
            if self.use_disk_cache:
                digest = hashlib.sha256(str(root).encode()).hexdigest()[:20]
                disk_path = self.cache_dir / f"{digest}.tags"
            self._caches[root] = TagCache(disk_path, self.workers)
        return self._caches[root]

    async def run(self, args: CodeMapArgs, ctx: ToolContext) -> ToolResult:
        target = ctx.resolve(args.path)
        if not target.exists():
            raise ToolError(
                f"{args.path!r} does not exist; give a file or directory in the workspace "
                "(default '.', the workspace root); find_files can locate files by name"
            )
        query = None
        if args.query is not None:
            query = SymbolQuery.parse(args.query)
            if query is None:
                raise ToolError(
                    f"query {args.query!r} is not a symbol name; give one identifier like "
                    "'parse_args' or 'Session.submit' (for patterns, use the search tool)"
                )
        output = await asyncio.to_thread(self._answer, target, query, ctx)
        return ToolResult(output=output)

    def _answer(self, target: Path, query: SymbolQuery | None, ctx: ToolContext) -> str:
        with self._lock:
            files = (
                [self._single_file(target, ctx)] if target.is_file() else discover(target, ctx.root)
            )
            cache = self.cache_for(ctx.root)
            tags_by_file = cache.tags(files)
            where = ctx.relative(target)
            in_play = {ctx.relative(path) for path in (*ctx.changed_files, *ctx.read_stamps)}
            if query is not None:
                definitions = find_definitions(query, tags_by_file)
                uses, using_files = find_uses(query, files, tags_by_file, in_play)
                return render_query(query, where, definitions, uses, using_files, tags_by_file)
            if target.is_file():
                if not tags_by_file:
                    raise ToolError(
                        f"{where} looks binary or minified, or cannot be read; code_map outlines "
                        "source code (use search or read_file for this file)"
                    )
                return self._file_outline(where, tags_by_file[where])
            if not tags_by_file:
                return (
                    f"No source files code_map reads under {where} (it reads {_READABLE} and "
                    "similar); use find_files to see what is there."
                )
            outline = self._directory_outline(tags_by_file)
            if outline is not None:
                return f"Outline of {where} ({len(tags_by_file)} source files):\n{outline}"
            index = self._indexes.setdefault(ctx.root, ReferenceIndex())
            return self._repo_map(where, tags_by_file, in_play, cache, index)

    def _single_file(self, target: Path, ctx: ToolContext) -> SourceFile:
        where = ctx.relative(target)
        language = language_for(target)
        if not supports(language):
            raise ToolError(
                f"code_map has no grammar for {where}; it reads {_READABLE} and similar. "
                "Use read_file for this file."
            )
        info = os.stat(target)
        if info.st_size > MAX_FILE_BYTES:
            raise ToolError(
                f"{where} is {info.st_size:,} bytes, over code_map's {MAX_FILE_BYTES:,}-byte limit; "
                "use search to find what you need in it, or read_file with offset and limit"
            )
        return SourceFile(str(target), where, language or "", info.st_mtime_ns, info.st_size)

    def _file_outline(self, where: str, tags: FileTags) -> str:
        budget = self.outline_tokens * CHARS_PER_TOKEN
        text = render_outline(where, tags.definitions)
        if len(text) <= budget:
            return text
        lines = text.splitlines()
        kept, size = [], 0
        for line in lines:
            if size + len(line) + 1 > budget:
                break
            kept.append(line)
            size += len(line) + 1
        hidden = tags.definitions[len(kept) - 1 :]
        kept.append(
            f"  … {len(hidden)} more definitions (lines {hidden[0].line}-{hidden[-1].line}); "
            "use read_file with offset, or code_map with query=NAME"
        )
        return "\n".join(kept)

    def _directory_outline(self, tags_by_file: dict[str, FileTags]) -> str | None:
        """Every file's full outline when it all fits the map budget, else None."""
        budget = self.map_tokens * CHARS_PER_TOKEN
        blocks, size = [], 0
        for rel, tags in tags_by_file.items():
            block = render_outline(rel, tags.definitions)
            size += len(block) + 1
            if size > budget:
                return None
            blocks.append(block)
        return "\n".join(blocks)

    def _repo_map(
        self,
        where: str,
        tags_by_file: dict[str, FileTags],
        in_play: set[str],
        cache: TagCache,
        index: ReferenceIndex,
    ) -> str:
        playing = frozenset(in_play & tags_by_file.keys())
        key = (id(cache), cache.generation, tuple(tags_by_file), playing, self.map_tokens)
        if self._ranking is None or self._ranking[0] != key:
            index.sync(tags_by_file)
            limit = most_that_fit(self.map_tokens * CHARS_PER_TOKEN)
            self._ranking = (key, rank_definitions(tags_by_file, index, playing, limit))
        ranked = self._ranking[1]
        favoured = ", favouring files you read or changed" if playing else ""
        header = (
            f"Repo map of {where}: {len(tags_by_file)} source files, definitions most used by "
            f"other files first{favoured}. For more: code_map path=FILE (outline), query=NAME (uses)."
        )
        total = self.map_tokens * CHARS_PER_TOKEN
        footer_room = 64
        if total - len(header) - footer_room < total // 2:  # a tiny budget goes to the map itself
            header, footer_room = "", 0
        body, count = fit_map(ranked, tags_by_file, total - len(header) - footer_room - 2)
        footer = ""
        if footer_room:
            shown_files = len({item.rel for item in ranked[:count]})
            footer = f"({count} definitions from {shown_files} of {len(tags_by_file)} files)"
        return "\n".join(part for part in (header, body, footer) if part)
