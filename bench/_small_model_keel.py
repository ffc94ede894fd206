"""Through-keel mode of the small-model benchmark: the task's files committed in a fresh git repo, the real
`keel run` CLI as a subprocess under a wall-clock timeout, then the check. Its stream-json events say what
the loop did (finish status, model calls, tokens) and are kept for the transcripts of failures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _small_model_tasks import Task, git_repo, run_check, tool_environment

GRACE = 20.0  # seconds keel gets to stop cleanly (SIGTERM interrupts the task) before SIGKILL


@dataclass
class KeelSettings:
    """How `keel run` is called: the model and the limits of one task."""

    model: str
    api_base: str | None
    budget: int
    max_steps: int
    timeout: float
    temperature: float  # the embedded model's (KEEL_LOCAL_TEMPERATURE); a server keeps its own
    threads: int | None = (
        None  # the embedded model's decode threads (KEEL_LOCAL_THREADS); None: keel's default
    )


@dataclass
class EventSummary:
    """What the stream-json events of one run say."""

    status: str  # session.finished's status; "no finish" when the run ended without one
    calls: int  # model replies, summarization calls included
    tokens: int


@dataclass
class KeelRun:
    """One task through keel: the check's verdict, the loop's figures, and its output for transcripts."""

    passed: bool
    status: str  # as EventSummary's, or "timeout"
    calls: int
    tokens: int
    seconds: float
    returncode: int | None
    events: str
    stderr: str
    check_output: str


def keel_command(prompt: str, settings: KeelSettings) -> list[str]:
    """The `keel run` argv, as a script or CI job would write it."""
    command = [sys.executable, "-m", "keel", "run", "--model", settings.model]
    if settings.api_base:
        command += ["--api-base", settings.api_base]
    command += ["--output-format", "stream-json", "--budget", str(settings.budget)]
    command += ["--max-steps", str(settings.max_steps), prompt]
    return command


def read_events(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a stream-json log (a torn last line, after a kill, is skipped)."""
    events = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def summarize(events: list[dict[str, Any]]) -> EventSummary:
    """Finish status, model calls and total tokens from the events (the last usage seen, when the run
    never finished)."""
    calls = sum(
        event.get("type") in ("assistant.message", "context.summarized") for event in events
    )
    status, tokens = "no finish", 0
    for event in events:
        usage = event.get("task_usage") or event.get("usage")
        if isinstance(usage, dict):
            tokens = max(tokens, int(usage.get("total_tokens") or 0))
        if event.get("type") == "session.finished":
            status = str(event.get("status"))
    return EventSummary(status=status, calls=calls, tokens=tokens)


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how many more there were."""
    return text if len(text) <= limit else f"{text[:limit]}[... {len(text) - limit} more]"


def transcript(events: list[dict[str, Any]], limit: int = 1000) -> str:
    """The run as a person reads it: the messages, each tool call and its result, errors and the
    finish (a long text cut to `limit` characters: a small model may repeat itself for a thousand)."""
    parts = []
    for event in events:
        kind = event.get("type")
        if kind == "user.message":
            parts.append(f"## {event.get('origin', 'user')}\n{cut(str(event.get('text')), limit)}")
        elif kind == "assistant.message":
            calls = [
                f"-> {call.get('name')} {cut(str(call.get('arguments')), limit)}"
                for call in event.get("tool_calls", [])
            ]
            parts.append("\n".join([f"## assistant\n{cut(str(event.get('text')), limit)}", *calls]))
        elif kind == "tool.finished":
            output = cut(str(event.get("output")), limit)
            parts.append(f"<- {event.get('name')} {event.get('status')}:\n{output}")
        elif kind == "error":
            parts.append(f"## error {event.get('error_class')}: {event.get('message')}")
        elif kind == "session.finished":
            parts.append(f"## finished: {event.get('status')} {event.get('reason', '')}".rstrip())
    return "\n\n".join(parts)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Interrupt keel (SIGTERM: it closes its session and its model worker), then kill what is left."""
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def keel_environment(settings: KeelSettings, seed: int, folder: Path) -> dict[str, str]:
    """The checks' environment, with no model chosen from outside the flags; the embedded model samples with
    `seed` (each `keel run` starts a worker of its own: with one seed for all, every repeat would be the same).
    keel's config is one written in `folder`: a model call may take the attempt's whole timeout, as every
    peer's is given (the 1.5B on two cores took over 600 s, keel's default, for one reply to a medium task)."""
    config = folder / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"request_timeout = {settings.timeout}\n")
    sampling = {"KEEL_LOCAL_TEMPERATURE": str(settings.temperature), "KEEL_LOCAL_SEED": str(seed)}
    env = tool_environment(sampling | {"XDG_CONFIG_HOME": str(folder / "config")})
    for name in ("KEEL_MODEL", "KEEL_API_BASE"):
        env.pop(name, None)
    return env


def run_keel(task: Task, settings: KeelSettings, attempt: int = 1) -> KeelRun:
    """The task in a fresh repository through `keel run`, stopped at the timeout, then checked; the attempt
    number is the embedded model's seed."""
    with tempfile.TemporaryDirectory(prefix=f"keel-bench-{task.name}-") as folder:
        repo = git_repo(Path(folder) / "repo", task.files)
        events_path, stderr_path = Path(folder) / "events.jsonl", Path(folder) / "stderr.txt"
        started = time.perf_counter()
        with events_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                keel_command(task.spec.prompt, settings),
                cwd=repo,
                env=keel_environment(settings, attempt, Path(folder)),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,  # its own process group, so a timeout stops all of it
            )
            try:
                process.wait(timeout=settings.timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
                stop(process)
        seconds = time.perf_counter() - started
        events = events_path.read_text(errors="replace")
        errors = stderr_path.read_text(errors="replace")
        summary = summarize(read_events(events))
        check = run_check(task, repo)
    return KeelRun(
        passed=check.passed,
        status="timeout" if timed_out else summary.status,
        calls=summary.calls,
        tokens=summary.tokens,
        seconds=seconds,
        returncode=process.returncode,
        events=events,
        stderr=errors,
        check_output=check.output,
    )
