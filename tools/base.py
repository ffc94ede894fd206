"""What every tool is: a name, a pydantic Args model, a kind for the approval policy, an async run."""

from __future__ import annotations

import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict

from keel.tools.images.image_file import ImageData

if TYPE_CHECKING:
    from keel.tools.exec.jobs import JobTable
    from keel.tools.exec.sandbox_policy import SandboxPolicy


class ToolKind(str, Enum):
    """What a tool may do, which is what the approval policy decides on."""

    READ = "read"
    EDIT = "edit"
    EXEC = "exec"


class ToolError(Exception):
    """A problem the model can fix: the message goes back to it as the tool's result."""


class ToolArgs(BaseModel):
    """Base for tool arguments: unknown arguments are an error the model sees."""

    model_config = ConfigDict(extra="forbid")


class ToolResult(BaseModel):
    output: str
    ok: bool = True
    diff: str | None = None
    unchanged: bool = False  # it succeeded without changing anything (front ends show it apart)
    # an image for the model (read_file's), sent after the step's results
    image: ImageData | None = None


class FileStamp(NamedTuple):
    """What a file looked like when the agent last read or wrote it (to catch edits made behind its back). A
    tuple: the stamps of every file seen are compared at each call, in C (agent/core/files_seen)."""

    mtime_ns: int
    size: int

    @classmethod
    def of(cls, path: Path, st: os.stat_result | None = None) -> FileStamp:
        st = st or path.stat()
        return cls(st.st_mtime_ns, st.st_size)


# in every path of a tool description's example, so that a copied example is refused instead of run
EXAMPLE_MARK = "EXAMPLE_ONLY"


def is_placeholder(path: str) -> bool:
    """A path copied from an example: one with EXAMPLE_ONLY in it, or a part that is only dots ("...")."""
    return EXAMPLE_MARK in path or any(len(p) > 2 and set(p) == {"."} for p in Path(path).parts)


# What the file tools and sandboxed commands never change, and what each holds (for the message).
PROTECTED_NAMES = {".git": "the repository's git metadata", ".keel": "keel's own configuration"}


def _default_sandbox() -> SandboxPolicy:
    from keel.tools.exec.sandbox_policy import SandboxPolicy

    return SandboxPolicy()


@dataclass
class ToolContext:
    """Per-session state the tools share: the workspace root and what the agent has seen and changed."""

    root: Path
    scratch: Path
    read_stamps: dict[Path, FileStamp] = field(default_factory=dict)
    changed_files: set[Path] = field(default_factory=set)
    jobs: JobTable | None = None
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    sandbox: SandboxPolicy = field(default_factory=_default_sandbox)
    # the session's model takes images (read_file then gives it an image)
    takes_images: bool = False

    def __post_init__(self) -> None:
        self.root = Path(os.path.realpath(self.root))

    def resolve(self, path: str) -> Path:
        """The absolute path for a workspace-relative one; anything resolving outside is refused."""
        if "\x00" in path:
            raise ToolError("path contains a NUL byte")
        try:
            candidate = Path(path).expanduser()
        except RuntimeError:  # "~user" for a user that does not exist: taken literally
            candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        elif (mount := self.sandbox.workspace_mount) and candidate.is_relative_to(mount):
            candidate = self.root / candidate.relative_to(mount)  # as the commands see it (/app)
        try:
            real_text = real_below(str(self.root), str(candidate))
        except OSError as exc:  # a link swapped for a folder while it was being followed
            raise ToolError(f"{path!r} could not be resolved ({exc.strerror}); try again") from None
        root_text = str(self.root)
        if real_text != root_text and not real_text.startswith(root_text.rstrip(os.sep) + os.sep):
            real = Path(real_text)
            meant = self._inside_tail(candidate)
            hint = f"; did you mean {meant!r}?" if meant else ""
            raise ToolError(
                f"{path!r} resolves to {real}, outside the workspace {self.root}; "
                f"use a path inside the workspace (relative paths are relative to it){hint}"
            )
        return Path(real_text)

    def resolve_writable(self, path: str) -> Path:
        """`resolve` for a tool about to change the file: refused in the read-only sandbox, and in
        .git and .keel, whose config and hooks run programs outside the sandbox later."""
        from keel.tools.exec.sandbox_policy import SandboxMode

        if is_placeholder(path):
            raise ToolError(
                f"{path!r} is a placeholder from an example (a tool's description or keel's "
                "correction), not a file of this project, so nothing was changed: do not copy the "
                "example; use the paths and the text your task needs (find_files lists the "
                "project's files)"
            )
        resolved = self.resolve(path)
        if self.sandbox.mode is SandboxMode.READ_ONLY:
            raise ToolError(
                f"the sandbox is read-only (--sandbox read-only), so {path!r} was left unchanged: "
                "no tool may change files in this session; say what you would change instead"
            )
        inside = resolved.relative_to(self.root).parts
        if protected := next((part for part in inside if part.lower() in PROTECTED_NAMES), None):
            raise ToolError(
                f"{self.relative(resolved)} is protected: {protected} holds "
                f"{PROTECTED_NAMES[protected.lower()]}, which no tool or command may change (its "
                "settings would run programs outside the sandbox), so it was left unchanged; "
                "change files elsewhere, or ask the user to make this change"
            )
        return resolved

    def _inside_tail(self, outside: Path) -> str | None:
        """The longest tail of an outside path that names a file in the workspace ("/home/me/calc.py" ->
        "calc.py"): small models put the project under a folder of their own invention."""
        parts = outside.parts[1:]
        if ".." in parts:
            return None
        for start in range(len(parts)):
            tail = Path(*parts[start:])
            if (self.root / tail).is_file():
                return tail.as_posix()
        return None

    def relative(self, path: Path) -> str:
        """How a path is shown to the model: relative to the workspace root."""
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(path)

    def note_read(self, path: Path, st: os.stat_result | None = None) -> None:
        """Remember the file as read; `st` is its stat from before the read, when the caller has it."""
        self.read_stamps[path] = FileStamp.of(path, st)

    def note_written(self, path: Path) -> None:
        self.changed_files.add(path)
        try:
            self.read_stamps[path] = FileStamp.of(path)
        except OSError:  # deleted, or already gone again (a command, a folder swapped under it)
            self.read_stamps.pop(path, None)

    def note_restored(self, paths: list[Path]) -> None:
        """keel's undo rewrote these files: a file the agent had read or written is as fresh as if it had
        written it now (the change is keel's own, not someone else's), a deleted one is forgotten."""
        for path in paths:
            if not path.exists():
                self.read_stamps.pop(path, None)
            elif path in self.read_stamps or path in self.changed_files:
                self.read_stamps[path] = FileStamp.of(path)

    async def aclose(self) -> None:
        """End whatever the tools started (background commands) when the session ends."""
        closers, self.closers = self.closers, []
        for close in closers:
            await close()


A = TypeVar("A", bound=ToolArgs)


class Tool(ABC, Generic[A]):
    """One tool; subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    kind: ClassVar[ToolKind]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]
    # the same call made twice in a row returns the same result (false for what polls a running process)
    same_result_again: ClassVar[bool] = True
    # the arguments' JSON schema when it is not Args' own: an MCP server's (keel.tools.mcp.tool)
    parameters: ClassVar[dict[str, Any] | None] = None

    def check_arguments(self, arguments: dict[str, Any]) -> ToolArgs:
        """The arguments validated; a pydantic ValidationError or a ToolError says what to fix."""
        return self.Args.model_validate(arguments)

    @abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        """Do the work; raise ToolError for problems the model can fix."""


def real_below(root: str, path: str) -> str:
    """`os.path.realpath(path)` for a path given to a real `root`: a path under it with no `..` and no link
    below the root is itself (one lstat per component below the root, none for the root's own, which
    realpath would walk at every call); any other path is resolved by realpath."""
    prefix = root.rstrip(os.sep) + os.sep
    if path == root:
        return root
    if not path.startswith(prefix):
        return os.path.realpath(path)
    parts = path[len(prefix) :].split(os.sep)
    if ".." in parts or "" in parts or "." in parts:
        return os.path.realpath(path)
    current = root.rstrip(os.sep)
    for part in parts:
        current = f"{current}{os.sep}{part}"
        try:
            linked = stat.S_ISLNK(os.lstat(current).st_mode)
        except OSError:  # not there (yet): realpath keeps it and what follows as given
            linked = False
        if linked:
            return os.path.realpath(path)
    return current
