"""The Dockerfile subset keel's local environment builds without Docker: WORKDIR, COPY, ENV, ARG and RUN.

Pure functions: `parse_dockerfile` turns the text into a Recipe of copy and run steps inside the workdir,
or raises Unsupported with the reason a person reads when the task is skipped.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from typing import Literal

from pydantic import BaseModel, Field

IGNORED = {"CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "MAINTAINER", "VOLUME", "HEALTHCHECK",
           "STOPSIGNAL", "SHELL", "USER", "ONBUILD"}  # fmt: skip
_SYSTEM_INSTALL = re.compile(
    r"\b(apt-get|apt|apk|yum|dnf|microdnf|zypper|pacman)\b[^;&|]*\b(install|add|upgrade|-S)\b"
)
_VARIABLE = re.compile(r"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")


class Unsupported(Exception):
    """The Dockerfile needs what only a container can give (a system package, a second stage, a URL)."""


class CopyStep(BaseModel):
    kind: Literal["copy"] = "copy"
    sources: list[str]
    dest: str  # absolute, in the container
    line: int


class RunStep(BaseModel):
    kind: Literal["run"] = "run"
    command: str
    cwd: str  # absolute, in the container
    env: dict[str, str]
    line: int


class Recipe(BaseModel):
    """What building the environment does, in order; `workdir` is where the workspace appears."""

    base_image: str = ""
    workdir: str = "/"
    env: dict[str, str] = Field(default_factory=dict)
    steps: list[CopyStep | RunStep] = Field(default_factory=list)


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Instructions with their first line number: continuations joined, comments and blanks dropped."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].rstrip())
            continue
        pending.append(stripped)
        lines.append((start, " ".join(part for part in pending if part)))
        pending = []
    if pending:
        lines.append((start, " ".join(pending)))
    return lines


def expand(text: str, variables: dict[str, str]) -> str:
    """$NAME, ${NAME} and ${NAME:-default} as Docker expands them in WORKDIR, COPY, ENV and ARG."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        default = match.group(2)
        found = variables.get(name, "")
        return found if found or default is None else default

    return _VARIABLE.sub(value, text)


def _pairs(arguments: str) -> dict[str, str]:
    """ENV/ARG's `K=V K2="V 2"` form, or the older `K V` form."""
    words = shlex.split(arguments)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(word.partition("=")[::2] for word in words)


def _words(arguments: str) -> list[str]:
    """COPY's arguments: the JSON array form or whitespace-separated words."""
    if arguments.startswith("["):
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return [str(item) for item in parsed]
    return arguments.split()


def _run_command(arguments: str) -> str:
    """RUN's shell form as it is; its exec form (a JSON array) joined into one shell command."""
    if arguments.startswith("["):
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
        if isinstance(parsed, list):
            return shlex.join(str(item) for item in parsed)
    return arguments


class _Builder:
    """Walks the instructions, tracking WORKDIR, ENV and ARG as Docker does."""

    def __init__(self) -> None:
        self.recipe = Recipe()
        self.variables: dict[str, str] = {}
        self.stages = 0

    def add(self, line: int, instruction: str) -> None:
        keyword, _, arguments = instruction.partition(" ")
        keyword, arguments = keyword.upper(), arguments.strip()
        if keyword == "FROM":
            self.stages += 1
            if self.stages > 1:
                raise Unsupported(f"line {line}: a second FROM (a multi-stage build) needs Docker")
            self.recipe.base_image = (
                expand(arguments.split()[0], self.variables) if arguments else ""
            )
        elif keyword == "WORKDIR":
            path = expand(arguments, self.variables)
            self.recipe.workdir = posixpath.normpath(posixpath.join(self.recipe.workdir, path))
        elif keyword in ("ENV", "ARG"):
            pairs = {
                name: expand(value, self.variables) for name, value in _pairs(arguments).items()
            }
            if keyword == "ENV":
                self.recipe.env.update(pairs)
            self.variables.update({k: v for k, v in pairs.items() if v or k not in self.variables})
        elif keyword in ("COPY", "ADD"):
            self._copy(line, keyword, arguments)
        elif keyword == "RUN":
            self._run(line, arguments)
        elif keyword not in IGNORED:
            raise Unsupported(f"line {line}: {keyword} is not an instruction keel knows")

    def _copy(self, line: int, keyword: str, arguments: str) -> None:
        words = [expand(word, self.variables) for word in _words(arguments)]
        flags = [word for word in words if word.startswith("--")]
        if any(flag.startswith("--from") for flag in flags):
            raise Unsupported(
                f"line {line}: {keyword} --from needs Docker (another stage or image)"
            )
        paths = [word for word in words if not word.startswith("--")]
        if len(paths) < 2:
            raise Unsupported(f"line {line}: {keyword} needs a source and a destination")
        *sources, dest = paths
        if keyword == "ADD" and any(re.match(r"^\w+://", src) for src in sources):
            raise Unsupported(f"line {line}: ADD of a URL needs the network and Docker")
        if keyword == "ADD" and any(re.search(r"\.(tar|tgz|tar\.\w+)$", src) for src in sources):
            raise Unsupported(f"line {line}: ADD of an archive (unpacked by Docker) needs Docker")
        absolute = posixpath.normpath(posixpath.join(self.recipe.workdir, dest))
        if dest.endswith(("/", "/.")) or dest == ".":
            absolute = absolute.rstrip("/") + "/"
        self.recipe.steps.append(CopyStep(sources=sources, dest=absolute, line=line))

    def _run(self, line: int, arguments: str) -> None:
        command = _run_command(arguments)
        if _SYSTEM_INSTALL.search(command):
            raise Unsupported(
                f"line {line}: RUN installs system packages ({clip(command)}), which needs root "
                "in a container; run this task with --env docker"
            )
        self.recipe.steps.append(
            RunStep(command=command, cwd=self.recipe.workdir, env=dict(self.recipe.env), line=line)
        )


def clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def parse_dockerfile(text: str, workdir: str | None = None) -> Recipe:
    """The Recipe of a Dockerfile; its workdir holds every COPY and RUN (the last WORKDIR, or the folder
    above it that earlier steps used); `workdir` (task.toml's environment.workdir) overrides it."""
    builder = _Builder()
    for line, instruction in logical_lines(text):
        builder.add(line, instruction)
    recipe = builder.recipe
    places = [step.dest if isinstance(step, CopyStep) else step.cwd for step in recipe.steps]
    recipe.workdir = posixpath.normpath(workdir or posixpath.commonpath([recipe.workdir, *places]))
    if recipe.workdir == "/":
        raise Unsupported(
            "the Dockerfile works in / (no WORKDIR holds its COPY and RUN steps): the local "
            "environment needs one folder to hold the workspace; run this task with --env docker"
        )
    for step, where in zip(recipe.steps, places, strict=True):
        if not inside(where, recipe.workdir):
            verb = "COPY to" if isinstance(step, CopyStep) else "RUN in"
            raise Unsupported(
                f"line {step.line}: {verb} {where}, outside the workdir {recipe.workdir}: "
                "the local environment holds only the workdir; run this task with --env docker"
            )
    return recipe


def inside(path: str, folder: str) -> bool:
    """Whether a container path lies in a folder (or is it)."""
    path = posixpath.normpath(path)
    return path == folder or path.startswith(folder.rstrip("/") + "/")
