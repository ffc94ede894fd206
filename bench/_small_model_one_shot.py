"""One-shot mode of the small-model benchmark: the task's files pasted into one prompt, one model call,
the whole files it writes back applied, then the check. The baseline keel's agent loop is measured against."""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

from _small_model_tasks import TASKS_DIR, Task, run_check, write_files

from keel.agent.core.model.client import ModelClient
from keel.agent.core.model.sampling import CallSampling

PROMPT = Template((TASKS_DIR / "one_shot_prompt.md").read_text())
SYSTEM = "You are a careful Python programmer."
MAX_TOKENS = 2048  # room for a few small files in full

FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(.*?)\s*$")
MARKED = re.compile(r"\b(?:file|filename|path)\s*[:=]\s*(.+)", re.IGNORECASE)
PATH = re.compile(r"[\w.\-/]*\w\.[A-Za-z0-9]+")
NOT_FILES = {"bash", "sh", "shell", "console", "shell-session", "text", "diff", "patch", "json"}
HEADER = re.compile(r"^\W*file(?:name)?\s*:\s*(\S+?)\W*$", re.IGNORECASE)  # "# FILE: x.py"
DEFINES = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)", re.MULTILINE)


def fenced(path: str, text: str) -> str:
    """One file as the prompt shows it, in the format the reply is asked to use."""
    body = text if text.endswith("\n") else text + "\n"
    return f"FILE: {path}\n```python\n{body}```\n\n"


def one_shot_messages(task: Task) -> list[dict[str, Any]]:
    """The single request: every file of the task in full, then the task and the reply format."""
    shown = "".join(fenced(path, text) for path, text in task.files.items())
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": PROMPT.substitute(files=shown, task=task.spec.prompt)},
    ]


def clean_path(text: str) -> str | None:
    """A relative path inside the workspace from text like "`./calc.py`:" (None: no such path)."""
    found = PATH.search(text.strip().strip("`*'\"#>[]():"))
    if found is None:
        return None
    path = found.group(0).removeprefix("./")
    if path.startswith("/") or ".." in Path(path).parts:
        return None
    return path


@dataclass
class Named:
    """A path announced before a block; `explicit` when written as a heading (`FILE: x`, `### x`), not
    in passing in a sentence."""

    path: str
    explicit: bool


def named_path(line: str, known: dict[str, str]) -> Named | None:
    """The file a line outside code blocks announces: `FILE: x` (any path), a line that is just a path,
    or a sentence naming exactly one of the task's files ("Here is the fixed `calc.py`:")."""
    if marked := MARKED.search(line):
        path = clean_path(marked.group(1))
        return Named(path, True) if path else None
    bare = line.strip().strip("`*#>:- \t")
    if bare and PATH.fullmatch(bare):
        path = clean_path(bare)
        return Named(path, True) if path else None
    mentioned = {path for path in known if re.search(rf"(?<![\w/]){re.escape(path)}\b", line)}
    return Named(mentioned.pop(), False) if len(mentioned) == 1 else None


def guess_path(code: str, known: dict[str, str]) -> str | None:
    """For a block with no path: the task file defining the most of the same names, or its only file."""
    names = set(DEFINES.findall(code))
    scores = {path: len(names & set(DEFINES.findall(text))) for path, text in known.items()}
    best = max(scores.values(), default=0)
    winners = [path for path, score in scores.items() if score == best]
    if best > 0 and len(winners) == 1:
        return winners[0]
    return next(iter(known)) if len(known) == 1 and code.strip() else None


@dataclass
class Block:
    """A fenced block being read: its language, the path announced for it, its lines so far."""

    language: str
    named: Named | None
    lines: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        """Nothing but blank lines so far (a fence here starts the real block)."""
        return not "".join(self.lines).strip()


def open_block(info: str, named: Named | None) -> Block:
    """A block opened by a fence whose info string is `info` ("python", "python calc.py", "")."""
    path = clean_path(info) if PATH.search(info) else None
    language = info.split()[0].lower() if info.split() else ""
    return Block(language, Named(path, True) if path else named)


def place(block: Block, known: dict[str, str], files: dict[str, str]) -> None:
    """Keep a finished block as a file: under its path, else the task file it redefines; a shell or
    text block counts only under a path written as a heading."""
    code = "".join(block.lines)
    if block.named is not None:
        if block.named.explicit or block.language not in NOT_FILES:
            files[block.named.path] = code
    elif block.language not in NOT_FILES and (guessed := guess_path(code, known)):
        files[guessed] = code


def trailing_header(block: Block) -> Named | None:
    """A `FILE: x` line that ends an unclosed block, taken off it: it names the next block."""
    while block.lines and not block.lines[-1].strip():
        block.lines.pop()
    header = HEADER.match(block.lines[-1]) if block.lines else None
    path = clean_path(header[1]) if header else None
    if path is None:
        return None
    block.lines.pop()
    while block.lines and not block.lines[-1].strip():
        block.lines.pop()
    return Named(path, True)


def parse_files(reply: str, known: dict[str, str]) -> dict[str, str]:
    """The whole files a reply gives, by path (a later block for a path wins). `known` is the task's
    files (path -> text), used to place blocks whose path is written loosely or not at all.

    Small models wrap the whole answer in a bare fence, put `FILE: x` inside it, and forget closing
    fences: a fence with a language inside a block is read as the start of the real (or the next) block.
    """
    files: dict[str, str] = {}
    pending: Named | None = None
    block: Block | None = None
    for line in reply.splitlines(keepends=True):
        fence = FENCE.match(line)
        if block is None:
            if fence:
                block, pending = open_block(fence.group(2), pending), None
            else:
                pending = named_path(line, known) or pending
        elif fence and not fence.group(2):
            place(block, known, files)
            block = None
        elif fence:
            named = block.named if block.empty() else trailing_header(block)
            if not block.empty():
                place(block, known, files)
            block = open_block(fence.group(2), named)
        elif block.empty() and (header := HEADER.match(line)) and (path := clean_path(header[1])):
            block.named = Named(path, True)
        else:
            block.lines.append(line)
    if block is not None:
        place(block, known, files)
    return files


@dataclass
class OneShotRun:
    """What one one-shot attempt did: the check's verdict, its cost, the reply, the files it applied."""

    passed: bool
    seconds: float
    tokens: int
    applied: list[str]
    reply: str
    check_output: str


async def one_shot(
    client: ModelClient, task: Task, max_tokens: int = MAX_TOKENS, seed: int | None = None
) -> OneShotRun:
    """Ask once, apply the files of the reply to a copy of the task's files, run the check."""
    started = time.perf_counter()
    sampling = CallSampling(seed=seed) if seed is not None else None
    reply = await client.complete(
        one_shot_messages(task), None, lambda _text: None, max_tokens, sampling
    )
    seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix=f"keel-oneshot-{task.name}-") as folder:
        workspace = Path(folder)
        write_files(workspace, task.files)
        applied: list[str] = []
        for path, text in parse_files(reply.text, task.files).items():
            try:
                write_files(workspace, {path: text})
            except (ValueError, OSError):
                continue  # a path outside the workspace, or one that cannot be a file
            applied.append(path)
        check = run_check(task, workspace)
    return OneShotRun(
        passed=check.passed,
        seconds=seconds,
        tokens=reply.usage.total_tokens,
        applied=applied,
        reply=reply.text,
        check_output=check.output,
    )


async def timed_one_shot(
    client: ModelClient, task: Task, timeout: float, seed: int | None = None
) -> OneShotRun:
    """`one_shot` under the wall-clock timeout keel's runs and the peers' get: a call that outlasts it fails
    the task (the call is cancelled; the shared server is settled before the next task). `seed` (the
    attempt's number) makes the repeats differ where nothing else seeds them."""
    try:
        return await asyncio.wait_for(one_shot(client, task, seed=seed), timeout)
    except TimeoutError:
        reply = f"(no reply within the {timeout:.0f} s timeout)"
        return OneShotRun(False, timeout, 0, applied=[], reply=reply, check_output="")
