"""Headless runs: one task, printed as text, one JSON result or a stream of JSON events; exit code by status."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Literal, TextIO

from keel.agent.core.api import named_command
from keel.agent.core.api.sessions import no_task_to_continue
from keel.agent.core.errors import exit_code_for
from keel.agent.core.protocol import (
    AnyEvent,
    AssistantDelta,
    Continue,
    Error,
    HookRan,
    ImageAttached,
    Interrupt,
    ModelProgress,
    ModelRetry,
    PlanModeChanged,
    ProfileChanged,
    SessionStarted,
    SetPlanMode,
    SubagentFinished,
    SubagentStarted,
    TaskFinished,
    TodoUpdated,
    ToolFinished,
    ToolStarted,
    UserPrompt,
    VerificationFinished,
)
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings

OutputFormat = Literal["text", "json", "stream-json"]


def _one_line(text: str, width: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def verification_line(event: VerificationFinished) -> str:
    """What keel's check of the changed files found, in one line."""
    outcome = "passed" if event.passed else "failed"
    checks = ", ".join(f"{check.name} {check.status}" for check in event.checks)
    return f"checks of the changed files {outcome} (round {event.round}): {checks}"


def subagent_line(event: SubagentStarted | SubagentFinished) -> str:
    """A subagent's start or end, in one line (its session id finds its own log)."""
    name = event.agent or "helper"
    if isinstance(event, SubagentStarted):
        return f"subagent {name} started ({event.child_session_id}): {_one_line(event.description, 80)}"
    status = event.status.replace("_", " ")
    return f"subagent {name} {status} ({event.child_session_id}), {event.usage.total_tokens} tokens"


def todo_line(event: TodoUpdated) -> str:
    """The model's checklist in one line: how much is done and what it works on now."""
    done = sum(item.status == "done" for item in event.items)
    now = [item.content for item in event.items if item.status == "in_progress"]
    doing = f"; now: {_one_line(now[0], 80)}" if now else ""
    return f"todo: {done}/{len(event.items)} done{doing}"


def progress_line(event: ModelProgress) -> str:
    """What the local model is busy with, in one line."""
    if event.stage == "prompt":
        return f"reading the prompt: {event.done:,}/{event.total:,} tokens"
    return event.message or event.stage


class Printer:
    """Consumes events; each output format is a subclass."""

    def __init__(self, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> None:
        self.out = out
        self.err = err
        self.session_id = ""

    def handle(self, event: AnyEvent) -> None:
        if isinstance(event, SessionStarted):
            self.session_id = event.session_id
        if isinstance(event, Error) and not event.fatal:  # a fatal one is reported once, at the end
            print(f"keel: {event.error_class}: {event.message}", file=self.err)
        elif isinstance(event, ModelRetry):
            print(
                f"keel: {event.error_class}, retrying in {event.delay:.1f}s "
                f"({event.attempt}/{event.max_attempts})",
                file=self.err,
            )

    def finish(self, finished: TaskFinished) -> None:
        """Called once with the task's last event."""


class TextPrinter(Printer):
    """Progress on stderr, the final answer on stdout."""

    def handle(self, event: AnyEvent) -> None:
        super().handle(event)
        if isinstance(event, SessionStarted) and event.sandbox.startswith(("landlock", "none")):
            print(f"keel: sandbox: {event.sandbox}", file=self.err)
        if isinstance(event, SessionStarted) and event.profile == "small":
            print(f"keel: small-model profile: {event.profile_reason}", file=self.err)
        elif isinstance(event, ProfileChanged):
            print(f"keel: small-model profile from now on: {event.reason}", file=self.err)
        elif isinstance(event, ModelProgress):
            print(f"keel: {progress_line(event)}", file=self.err, flush=True)
        elif isinstance(event, ToolStarted):
            args = " ".join(
                f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in event.arguments.items()
            )
            print(f"→ {event.name} {_one_line(args, 100)}", file=self.err)
        elif isinstance(event, ToolFinished) and not event.ok:
            print(f"  ✗ {_one_line(event.output)}", file=self.err)
        elif isinstance(event, VerificationFinished):
            print(f"keel: {verification_line(event)}", file=self.err)
        elif isinstance(event, SubagentStarted | SubagentFinished):
            print(f"keel: {subagent_line(event)}", file=self.err)
        elif isinstance(event, HookRan) and (event.blocked or event.exit_code != 0):
            what = "blocked" if event.blocked else f"failed ({event.exit_code})"
            print(f"keel: {event.hook_event} hook {what}: {_one_line(event.reason)}", file=self.err)
        elif isinstance(event, TodoUpdated):
            print(f"keel: {todo_line(event)}", file=self.err)
        elif isinstance(event, PlanModeChanged):
            mode = "only the read tools run" if event.active else "every tool runs"
            print(f"keel: plan mode {'on' if event.active else 'off'}: {mode}", file=self.err)
        elif isinstance(event, ImageAttached) and event.note:
            print(f"keel: image {event.name} not sent: {event.note}", file=self.err)

    def finish(self, finished: TaskFinished) -> None:
        if finished.final_message:
            print(finished.final_message, file=self.out)
        if finished.status == "error":
            print(
                f"keel: error: {finished.reason}. Resume with: keel run --resume {self.session_id}",
                file=self.err,
            )
        elif finished.status != "completed":
            print(
                f"keel: stopped ({finished.status}): {finished.reason}. "
                f"Resume with: keel run --resume {self.session_id}",
                file=self.err,
            )


class JsonPrinter(Printer):
    """One JSON object with the result, at the end."""

    def finish(self, finished: TaskFinished) -> None:
        result = {
            "type": "result",
            "session_id": self.session_id,
            **finished.model_dump(exclude={"type", "ts"}),
        }
        print(json.dumps(result, ensure_ascii=False), file=self.out)


class StreamJsonPrinter(Printer):
    """Every event (but the text deltas) as one JSON line, as it happens; a fatal error also on stderr."""

    def handle(self, event: AnyEvent) -> None:
        if isinstance(event, Error) and event.fatal:
            print(f"keel: error: {event.error_class}: {event.message}", file=self.err)
        if not isinstance(event, AssistantDelta):  # an image's bytes stay in the session log
            exclude = {"data"} if isinstance(event, ImageAttached) else None
            self.out.write(event.model_dump_json(exclude=exclude) + "\n")
            self.out.flush()


PRINTERS: dict[str, type[Printer]] = {
    "text": TextPrinter,
    "json": JsonPrinter,
    "stream-json": StreamJsonPrinter,
}


async def run_headless(
    settings: SessionSettings,
    prompt: str | None,
    output_format: OutputFormat,
    resume: Path | None = None,
    plan: bool = False,
    images: list[str] | None = None,
) -> int:
    """Run one task to its end and return the process exit code; `plan`: in plan mode (a resumed session
    planning before leaves it without)."""
    printer = PRINTERS[output_format]()
    finished: TaskFinished | None = None
    named = named_command(settings.cwd, prompt) if prompt else None
    if named is not None and "/" in named[0].model:  # a litellm name: the run uses that model
        settings = settings.model_copy(update={"model": named[0].model})
    session = Session(settings, resume=resume)
    if prompt is None and not session.state.task_prompt:
        await session.close()  # lets go of the session, which was never started
        raise no_task_to_continue(session.id)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, lambda: session.submit(Interrupt()))
    loop.add_signal_handler(signal.SIGTERM, lambda: session.submit(Interrupt()))
    try:
        async with session:
            if plan or session.state.plan_mode:
                session.submit(SetPlanMode(active=plan))
            session.submit(UserPrompt(text=prompt, images=images or []) if prompt else Continue())
            async for event in session.events():
                printer.handle(event)
                if isinstance(event, TaskFinished):
                    finished = event
                    break
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
    assert finished is not None, "a task always ends with session.finished"
    printer.finish(finished)
    return exit_code_for(finished.status)
