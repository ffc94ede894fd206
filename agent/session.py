"""The one handle front ends hold: submit ops, iterate events; the loop runs behind it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Self

from keel.agent.approval import Approvals
from keel.agent.config import DEFAULT_CONTEXT_WINDOW, keel_home
from keel.agent.context import ContextManager
from keel.agent.context.budget import auto_budget, count_repo_files
from keel.agent.context.summarizer import Summarizer
from keel.agent.diagnostics import internal_error_event
from keel.agent.errors import ProviderError
from keel.agent.git.checkpoints import CheckpointGuard
from keel.agent.loop import AgentLoop, TaskComplete
from keel.agent.messages import user
from keel.agent.model.client import ChatModel, ModelClient, context_window_of
from keel.agent.model.redact import RedactingModel, Redactor
from keel.agent.protocol import (
    AnyEvent,
    ApprovalDecision,
    ApprovalRequested,
    Approve,
    Compact,
    Continue,
    Error,
    FinishStatus,
    Interrupt,
    Op,
    SessionFinished,
    SessionStarted,
    SetBudget,
    Shutdown,
    ToolCall,
    UserMessage,
    UserPrompt,
)
from keel.agent.replay import mark_interrupted, restore_state, written_paths
from keel.agent.settings import SessionSettings
from keel.agent.state import LimitExceeded, SessionState
from keel.agent.store import SessionLog, new_session_id, read_events, sessions_dir
from keel.agent.system_prompt import SystemPrompt
from keel.agent.workspace_facts import gather_facts, load_instructions
from keel.tools import default_tools
from keel.tools.base import Tool, ToolContext, ToolError
from keel.tools.editing.fileio import remove_leftover_temp_files
from keel.tools.exec.sandbox_mechanism import sandbox_mechanism
from keel.tools.registry import ToolRegistry


class Session:
    """One agent session. `submit` ops, `async for event in events()`; `close` ends it and its children."""

    def __init__(
        self,
        settings: SessionSettings,
        tools: list[Tool] | None = None,
        resume: Path | None = None,
        model: ChatModel | None = None,
    ) -> None:
        """`model` replaces the litellm client (an in-process model, e.g. for benchmarks)."""
        self.settings = settings
        self.root = settings.cwd.resolve()
        prior = read_events(resume) if resume else []
        self.id = resume.stem if resume else new_session_id()
        self.redactor = Redactor.from_environment(extra=settings.secrets)
        self.log = SessionLog(resume or sessions_dir() / f"{self.id}.jsonl", self.redactor)
        self.registry = ToolRegistry(
            tools if tools is not None else default_tools(), redact=self.redactor.redact
        )
        protocol = "text" if settings.tool_protocol == "text" else "native"
        self.state = SessionState(
            session_id=self.id,
            tool_protocol=protocol,
            max_steps=settings.max_steps,
            budget=settings.budget,
        )
        self._fixed_budget = settings.budget
        if prior:
            restore_state(self.state, prior)
            if settings.budget is not None:  # on resume, --budget N grants N more tokens
                self.state.budget = self.state.task_tokens + settings.budget
        self.window = context_window_of(
            settings.model, settings.context_window, DEFAULT_CONTEXT_WINDOW, settings.api_base
        )
        self.tool_context = ToolContext(
            root=self.root, scratch=keel_home() / "scratch" / self.id, sandbox=settings.sandbox
        )
        if prior:
            self._remove_leftover_temp_files(prior)
        inner = model or ModelClient(
            model=settings.model,
            api_base=settings.api_base,
            retries=settings.retries,
            retry_base_delay=settings.retry_base_delay,
            timeout=settings.request_timeout,
            on_retry=self._emit,
            on_progress=self._emit,
            context_window=settings.context_window,
        )
        self.model = RedactingModel(inner, self.redactor)
        prompt = SystemPrompt(
            facts=gather_facts(self.root),
            instructions=load_instructions(self.root),
            registry=self.registry,
            compact=settings.compact_prompt,
        )
        self.context = ContextManager(
            prompt, self.window, settings.context, Summarizer(self.model, self.window), self._emit
        )
        self.approvals = Approvals(settings.approval)
        self.checkpoints = (
            CheckpointGuard(self.root, self.id, on_error=self._checkpoint_failed)
            if settings.checkpoints
            else None
        )
        self.loop = AgentLoop(
            self.state,
            self.model,
            self.registry,
            self.tool_context,
            self.context,
            self.approvals,
            self._emit,
            self._ask_person if settings.interactive else None,
            self.checkpoints,
        )
        self._resumed = bool(prior)
        self._events: asyncio.Queue[AnyEvent | None] = asyncio.Queue()
        self._work: asyncio.Queue[UserPrompt | Continue | Compact] = asyncio.Queue()
        self._pending_approvals: dict[str, asyncio.Future[ApprovalDecision]] = {}
        self._turn: asyncio.Task[None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = False

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def start(self) -> None:
        self._emit(
            SessionStarted(
                session_id=self.id,
                model=self.settings.model,
                cwd=str(self.root),
                context_window=self.window,
                tool_protocol=self.state.tool_protocol,
                approval=self.settings.approval,
                budget=self.state.budget,
                resumed=self._resumed,
                sandbox=sandbox_mechanism(self.settings.sandbox).description,
            )
        )
        self._worker = asyncio.create_task(self._work_loop())

    def submit(self, op: Op) -> None:
        """Hand an op to the session; it never blocks."""
        if isinstance(op, (UserPrompt, Continue, Compact)):
            self._work.put_nowait(op)
        elif isinstance(op, Interrupt):
            if self._turn is not None and not self._turn.done():
                self._turn.cancel()
            else:
                self._drop_queued_work()
        elif isinstance(op, Approve):
            future = self._pending_approvals.pop(op.call_id, None)
            if future is not None and not future.done():
                future.set_result(op.decision)
        elif isinstance(op, SetBudget):
            self.state.budget = self._fixed_budget = op.budget
        elif isinstance(op, Shutdown):
            asyncio.get_running_loop().create_task(self.close())

    async def events(self) -> AsyncIterator[AnyEvent]:
        """Every event in order, until the session is closed."""
        while True:
            event = await self._events.get()
            if event is None:
                return
            yield event

    async def close(self) -> None:
        """Stop the running turn (its end is still logged), end every child process, and close the log."""
        if self._closing:
            return
        self._closing = True
        for task in (self._turn, self._worker):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait([task])
        self._closed = True
        await self.tool_context.aclose()
        await self.model.aclose()
        self.log.close()
        self._events.put_nowait(None)

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    def _emit(self, event: AnyEvent) -> None:
        if self._closed:
            return
        self.log.append(event)
        self._events.put_nowait(event)

    async def _work_loop(self) -> None:
        while True:
            item = await self._work.get()
            if isinstance(item, Compact):
                work = self._compact()
            else:
                work = self._run_task(item.text if isinstance(item, UserPrompt) else None)
            self._turn = asyncio.create_task(work)
            await asyncio.wait([self._turn])
            if self._turn.cancelled() and not isinstance(item, Compact):
                self._finish(
                    "interrupted", "", "interrupted before it started"
                )  # cancelled before it ran

    def _drop_queued_work(self) -> None:
        """An interrupt with no turn running: the prompts still waiting end as interrupted."""
        while not self._work.empty():
            if not isinstance(self._work.get_nowait(), Compact):
                self._finish("interrupted", "", "interrupted before it started")

    def _finish(self, status: FinishStatus, final: str, reason: str) -> None:
        self._emit(
            SessionFinished(
                status=status,
                final_message=final,
                usage=self.state.usage,
                steps=self.state.steps,
                cost=self.state.cost,
                reason=reason,
            )
        )
        self.log.sync()

    async def _compact(self) -> None:
        try:
            await self.context.compact(self.state, reason="requested")
        except ProviderError as exc:
            self._emit(Error(error_class=exc.error_class, message=str(exc)))

    async def _run_task(self, text: str | None) -> None:
        """Run a task to its end; every way it can end is turned into one session.finished here."""
        if self.checkpoints is not None:
            self.checkpoints.new_turn()
        if text is not None:
            self._emit(UserMessage(text=text))
            self.state.start_task(user(text))
            self.state.budget = await self._budget_for(text)
        status: FinishStatus = "completed"
        final, reason = "", ""
        try:
            await self.loop.run()
        except TaskComplete as done:
            final = done.final_message
        except LimitExceeded as stop:
            status, reason = stop.status, stop.reason
        except ProviderError as exc:
            status, reason = "error", f"{exc.error_class}: {exc}"
            self._emit(Error(error_class=exc.error_class, message=str(exc), fatal=True))
        except asyncio.CancelledError:
            status, reason = "interrupted", "interrupted by the user"
            mark_interrupted(self.state.history)
        except Exception as exc:  # noqa: BLE001 - a bug of ours ends the task cleanly; its traceback is logged
            error = internal_error_event(exc, self.id, self.redactor.redact)
            status, reason = "error", error.message
            self._emit(error)
        self._finish(status, final, reason)

    async def _budget_for(self, prompt: str) -> int | None:
        """The task's budget: the one set (flag, config, /budget), else the estimate from the task."""
        if self._fixed_budget is not None or not self.settings.auto_budget:
            return self._fixed_budget
        files = count_repo_files(self.root)  # reads the index header: no thread or process needed
        return auto_budget(prompt, files)

    def _remove_leftover_temp_files(self, prior: list[AnyEvent]) -> None:
        """A write killed mid-way (the process died) leaves its temp file beside the target: clean up."""
        for written in written_paths(prior):
            try:
                remove_leftover_temp_files(self.tool_context.resolve(written))
            except ToolError:  # a path outside the workspace was refused when it was called, too
                continue

    def _checkpoint_failed(self, message: str) -> None:
        self._emit(
            Error(
                error_class="CheckpointError",
                message=f"{message}; `keel undo` will not cover this session",
            )
        )

    async def _ask_person(
        self, call: ToolCall, tool: Tool, arguments: dict[str, Any]
    ) -> ApprovalDecision:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._pending_approvals[call.id] = future
        self._emit(
            ApprovalRequested(
                call_id=call.id,
                name=call.name,
                arguments=arguments,
                reason=f"{tool.name} ({tool.kind.value}) needs approval under the {self.approvals.policy} policy",
            )
        )
        try:
            return await future
        finally:
            self._pending_approvals.pop(call.id, None)
