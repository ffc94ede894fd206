"""Parsed tags per file, reused while its (mtime_ns, size) is unchanged; in memory, and on disk across sessions."""

from __future__ import annotations

import marshal
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from keel.tools.codeintel.source_files import SourceFile
from keel.tools.codeintel.tags import TAGS_VERSION, FileTags, extract_tags

POOL_MIN_FILES = 200  # below this, starting worker processes costs more than it saves
_CHUNK_FILES = 48
_SAVE_AFTER_PARSE_SECONDS = 1.0  # persist only when re-parsing would cost more than writing
_BINARY_PROBE_BYTES = 8192
# marshal's format may change between Python versions; so may the tags between versions of keel.
_DISK_VERSION = f"tags{TAGS_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}"
_MINIFIED_MIN_BYTES = 20_000
_MINIFIED_LINE_BYTES = 500  # average line length beyond which a file is taken as minified


@dataclass(slots=True)
class _Entry:
    mtime_ns: int
    size: int
    tags: FileTags | None  # None: unreadable or binary, skipped until it changes


def looks_generated(source: bytes) -> bool:
    """Binary, or minified/generated text (very long lines): nothing a map should show."""
    if b"\0" in source[:_BINARY_PROBE_BYTES]:
        return True
    return len(source) > _MINIFIED_MIN_BYTES and source.count(b"\n") * _MINIFIED_LINE_BYTES < len(
        source
    )


def read_tags(path: str, language: str) -> FileTags | None:
    """Tags of one file on disk; None when it cannot be read, is binary or looks minified."""
    try:
        with open(path, "rb") as handle:
            source = handle.read()
    except OSError:
        return None
    if looks_generated(source):
        return None
    return extract_tags(source, language)


def idle_cores() -> int:
    """Cores not busy with other work (by the 1-minute load average), counting the one we run on.

    Worker processes only pay off when cores are idle: on a busy machine their start-up and the
    copying of results cost more than the parallelism brings (measured by bench/code_map.py).
    """
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        return cores
    return max(1, min(cores, int(cores - busy + 1)))


def _read_chunk(jobs: list[tuple[str, str]]) -> bytes:
    """A worker's tags for a chunk of files, marshalled (pickling dataclasses costs far more)."""
    results = (read_tags(path, language) for path, language in jobs)
    return marshal.dumps([None if tags is None else tags.to_plain() for tags in results])


def _unmarshal_chunk(data: bytes) -> list[FileTags | None]:
    return [None if plain is None else FileTags.from_plain(plain) for plain in marshal.loads(data)]


class TagCache:
    """Tags of many files; `parses` counts the files actually parsed, `generation` bumps on any change."""

    def __init__(
        self,
        disk_path: Path | None = None,
        workers: int | None = None,
        pool_min_files: int = POOL_MIN_FILES,
    ) -> None:
        self.disk_path = disk_path
        self.workers = workers  # None: as many as there are idle cores when parsing starts
        self.pool_min_files = pool_min_files
        self.parses = 0
        self.generation = 0
        self._entries: dict[str, _Entry] = {}
        self._loaded = disk_path is None
        self._unsaved_parse_seconds = 0.0

    def tags(self, files: list[SourceFile]) -> dict[str, FileTags]:
        """Tags by relative path for every readable file, parsing only those new or changed."""
        self._load()
        stale = [
            source
            for source in files
            if (entry := self._entries.get(source.path)) is None
            or entry.mtime_ns != source.mtime_ns
            or entry.size != source.size
        ]
        if stale:
            started = time.perf_counter()
            for source, tags in zip(stale, self._parse(stale), strict=True):
                self._entries[source.path] = _Entry(source.mtime_ns, source.size, tags)
            self.parses += len(stale)
            self.generation += 1
            self._unsaved_parse_seconds += time.perf_counter() - started
            if self._unsaved_parse_seconds > _SAVE_AFTER_PARSE_SECONDS:
                self.save()
        result: dict[str, FileTags] = {}
        for source in files:
            tags = self._entries[source.path].tags
            if tags is not None:
                result[source.rel] = tags
        return result

    def _parse(self, stale: list[SourceFile]) -> list[FileTags | None]:
        jobs = [(source.path, source.language) for source in stale]
        workers = self.workers if self.workers is not None else idle_cores()
        if workers < 2 or len(jobs) < self.pool_min_files:
            return [read_tags(path, language) for path, language in jobs]
        # Biggest files first so no worker is left with a large one at the end.
        order = sorted(range(len(jobs)), key=lambda i: -stale[i].size)
        chunks = [order[at : at + _CHUNK_FILES] for at in range(0, len(order), _CHUNK_FILES)]
        results: list[FileTags | None] = [None] * len(jobs)
        # spawn, not fork: the caller runs in a thread of a process that has other threads.
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            outputs = pool.map(_read_chunk, ([jobs[i] for i in chunk] for chunk in chunks))
            for chunk, data in zip(chunks, outputs, strict=True):
                for i, tags in zip(chunk, _unmarshal_chunk(data), strict=True):
                    results[i] = tags
        return results

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        assert self.disk_path is not None
        try:
            with open(self.disk_path, "rb") as handle:
                saved = marshal.loads(handle.read())  # marshal.load(file) reads item by item: slow
            if not isinstance(saved, dict) or saved.get("version") != _DISK_VERSION:
                return
            for path, (mtime_ns, size, plain) in saved["entries"].items():
                tags = None if plain is None else FileTags.from_plain(plain)
                self._entries[path] = _Entry(mtime_ns, size, tags)
        except (OSError, EOFError, ValueError, TypeError, KeyError):
            return  # no cache yet, or one from other code: parse afresh

    def save(self) -> None:
        """Write the entries of files that still exist to disk (atomically); no-op without a disk path."""
        self._unsaved_parse_seconds = 0.0
        if self.disk_path is None:
            return
        entries = {
            path: (
                entry.mtime_ns,
                entry.size,
                None if entry.tags is None else entry.tags.to_plain(),
            )
            for path, entry in self._entries.items()
            if os.path.exists(path)
        }
        self.disk_path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.disk_path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                marshal.dump({"version": _DISK_VERSION, "entries": entries}, out)
            os.replace(temporary, self.disk_path)
        except OSError:
            Path(temporary).unlink(missing_ok=True)
