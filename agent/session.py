"""The one handle front ends hold: submit ops, iterate events; the loop runs behind it."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from keel.agent.approval import Approvals
from keel.agent.commands.markdown import expand_prompt
from keel.agent.config import DEFAULT_CONTEXT_WINDOW, keel_home
from keel.agent.context.bounds import bound_events
from keel.agent.context.budget import auto_budget, count_repo_files
from keel.agent.context.manager import ContextManager
from keel.agent.context.summarizer import Summarizer
from keel.agent.diagnostics import internal_error_event
from keel.agent.errors import ProviderError, SessionLogError
from keel.agent.files_seen import recall, seen_since, snapshot
from keel.agent.fold import apply, fold, unanswered_calls, with_totals
from keel.agent.git.checkpoints import CheckpointError, CheckpointGuard
from keel.agent.git.undo import undo_in_session
from keel.agent.hooks.session_hooks import Hooks
from keel.agent.images.attach import prompt_images
from keel.agent.images.vision import takes_images
from keel.agent.leftovers import remove_leftover_temp_files
from keel.agent.loop import AgentLoop, TaskComplete
from keel.agent.model.client import ChatModel, ModelClient, context_window_of
from keel.agent.model.redact import RedactingModel, Redactor
from keel.agent.profile import ModelProfile
from keel.agent.profile_switch import as_small, early_failures
from keel.agent.protocol import (
    RUNNING_TURN,
    AnyEvent,
    ApprovalDecided,
    ApprovalDecision,
    ApprovalRequested,
    Approve,
    BudgetSet,
    Compact,
    Continue,
    Error,
    FinishStatus,
    Interrupt,
    Op,
    PlanModeChanged,
    ProfileChanged,
    SessionFinished,
    SessionStarted,
    SetBudget,
    SetPlanMode,
    Shutdown,
    ToolCall,
    TurnAborted,
    TurnStarted,
    Undo,
    UserMessage,
    UserPrompt,
    error_class_of,
    running_turn,
)
from keel.agent.settings import SessionSettings
from keel.agent.skills.catalog import find_skills
from keel.agent.state import LimitExceeded, SessionState
from keel.agent.store import SessionLog, new_session_id, read_events, sessions_dir
from keel.agent.strategies.base import Strategy
from keel.agent.strategies.choose import strategy_for
from keel.agent.subagents import with_subagents
from keel.agent.system_prompt import SystemPrompt
from keel.agent.workspace_facts import WorkspaceFacts, gather_facts, load_instructions
from keel.tools.base import Tool, ToolContext
from keel.tools.exec.sandbox_mechanism import sandbox_mechanism
from keel.tools.registry import ToolRegistry
from keel.tools.skill import SkillTool

if TYPE_CHECKING:
    from keel.tools.mcp.servers import McpServers

TurnOp = UserPrompt | Continue | Compact | Undo | SetPlanMode


class Session:
    """One agent session. `submit` ops, `async for event in events()`; `close` ends it and its children.

    Every event is logged, applied to `state` (keel.agent.fold.apply) and then published, in that order; the
    loop and the context manager only read the state and emit events.
    """

    def __init__(
        self,
        settings: SessionSettings,
        tools: list[Tool[Any]] | None = None,
        resume: Path | None = None,
        model: ChatModel | None = None,
    ) -> None:
        """`model` replaces the litellm client (an in-process model, e.g. for benchmarks)."""
        self.settings = settings
        self.root = settings.cwd.resolve()
        self.id = resume.stem if resume else new_session_id()
        self.redactor = Redactor.from_environment(extra=settings.secrets)
        # the log first: it locks the session, so no other process appends while this one reads it
        self.log = SessionLog(resume or sessions_dir() / f"{self.id}.jsonl", self.redactor)
        self.window = context_window_of(
            settings.model, settings.context_window, DEFAULT_CONTEXT_WINDOW, settings.api_base
        )
        prior = bound_events(read_events(resume), self.window) if resume else []
        self.state = fold(prior, SessionState(session_id=self.id, max_steps=settings.max_steps))
        profile = ModelProfile(
            compact=settings.compact_prompt,
            temperature=settings.temperature,
            parallel_calls=settings.parallel_calls,
        )
        moved = self.state.small_profile and not settings.profile_chosen  # before the resume
        if moved and not profile.compact:
            profile = as_small(profile, settings.model, settings.api_base)
        self.profile = profile
        self.strategy = strategy_for(profile, settings.loop)
        self._tools_given = tools is not None
        given = tools if tools is not None else self.strategy.tools()
        ask = self._ask_person if settings.interactive else None
        self.registry = ToolRegistry(
            with_subagents(given, settings, self._emit, self._current, ask),
            redact=self.redactor.redact,
        )
        self.skills = find_skills(self.root)
        if self.skills and not self._tools_given:  # the model loads a listed skill's body by name
            self.registry.add([SkillTool()])
        self._resumed = bool(prior)
        self.tool_context = ToolContext(
            root=self.root, scratch=keel_home() / "scratch" / self.id, sandbox=settings.sandbox
        )
        self.tool_context.takes_images = takes_images(settings.model, settings.images)
        if prior:
            remove_leftover_temp_files(prior, self.tool_context)
            recall(self.tool_context, self.state)
        self.mcp: McpServers | None = None
        if settings.mcp_servers:  # the SDK is imported only when a server is configured
            from keel.tools.mcp.servers import McpServers

            self.mcp = McpServers.for_session(settings.mcp_servers, self.tool_context)
        inner = model or ModelClient(
            model=settings.model,
            api_base=settings.api_base,
            retries=settings.retries,
            retry_base_delay=settings.retry_base_delay,
            timeout=settings.request_timeout,
            stall_timeout=settings.stall_timeout,
            on_retry=self._emit,
            on_progress=self._emit,
            context_window=settings.context_window,
            extra={} if profile.temperature is None else {"temperature": profile.temperature},
            record_tokens=settings.record_tokens,
        )
        self.model = RedactingModel(inner, self.redactor)
        prompt = SystemPrompt(
            facts=self._facts(),
            instructions=load_instructions(self.root),
            registry=self.registry,
            style=self.strategy.prompt_style,
            skills=self.skills,
        )
        self.context = ContextManager(
            prompt,
            self.window,
            settings.context,
            Summarizer(self.model, self.window),
            self._emit,
            self._current,
        )
        self.context.images = self.tool_context.takes_images
        self.approvals = Approvals(settings.approval, lambda: self.state.allowed_for_session)
        self.checkpoints = (
            CheckpointGuard(self.root, self.id, on_error=self._checkpoint_failed)
            if settings.checkpoints
            else None
        )
        self.loop = AgentLoop(
            self._current,
            self.model,
            self.registry,
            self.tool_context,
            self.context,
            self.approvals,
            self._emit,
            self._strategy,
            self._ask_person if settings.interactive else None,
            self.checkpoints,
            settings.loop,
        )
        self.loop.hooks = Hooks(
            settings.hooks, self.tool_context, self.id, self.log.path, self._emit
        )
        self._events: asyncio.Queue[AnyEvent | None] = asyncio.Queue()
        self._work: asyncio.Queue[TurnOp] = asyncio.Queue()
        self._pending_approvals: dict[str, asyncio.Future[ApprovalDecision]] = {}
        self._turn: asyncio.Task[None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = False

    def _strategy(self) -> Strategy:
        """The strategy for the session's model now (the loop asks at every step)."""
        return self.strategy

    def _facts(self) -> WorkspaceFacts:
        """What the system prompt says about the workspace; a small model's lists the files."""
        facts = gather_facts(self.root, list_files=self.strategy.prompt_style.lists_files)
        facts.test_command = self.settings.test_command
        facts.test_command_runs = self.settings.run_test_command
        if mount := self.settings.sandbox.workspace_mount:  # the root as the commands see it (/app)
            facts = facts.model_copy(update={"root": mount})
        return facts

    def _move_to_small(self, reason: str) -> None:
        """profile.changed, then the small profile from the next model call on: the compact prompt, the small
        model's tools (tools a caller gave, and MCP tools, stay), its temperature."""
        self._emit(ProfileChanged(reason=reason))
        self.profile = as_small(self.profile, self.settings.model, self.settings.api_base)
        self.strategy = strategy_for(self.profile, self.settings.loop)
        registry = self.registry
        if not self._tools_given:
            registry = ToolRegistry(self.strategy.tools(), redact=self.redactor.redact)
            registry.add([t for t in self.registry.tools if t.name.startswith("mcp__")])
            registry.add([t for t in self.registry.tools if t.name == "skill"])
        self.context.system_prompt = SystemPrompt(
            facts=self._facts(),
            instructions=self.context.system_prompt.instructions,
            registry=registry,
            style=self.strategy.prompt_style,
            skills=self.skills,
        )
        self.registry = self.loop.registry = registry
        client = self.model.inner
        if isinstance(client, ModelClient) and self.profile.temperature is not None:
            client.extra["temperature"] = self.profile.temperature

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def start(self) -> None:
        """Announce the session and start its worker, outside any turn (even when started inside another
        session's turn, as a child session is): their events carry no turn id."""
        outside = contextvars.copy_context()
        outside.run(RUNNING_TURN.set, "")
        outside.run(self._announce)
        self._worker = asyncio.create_task(self._work_loop(), context=outside)

    def _announce(self) -> None:
        """session.started, the config's notices, and on resume the close of a turn left open."""
        text = self.settings.tool_protocol == "text" or self.state.tool_protocol == "text"
        self._emit(
            SessionStarted(
                session_id=self.id,
                model=self.settings.model,
                cwd=str(self.root),
                context_window=self.window,
                tool_protocol="text" if text else "native",
                approval=self.settings.approval,
                budget=self.state.budget if self._resumed else self.settings.budget,
                resumed=self._resumed,
                sandbox=sandbox_mechanism(self.settings.sandbox).description,
                profile="small" if self.profile.compact else "full",
                profile_reason=(
                    "moved there earlier in this session: its model failed at calls"
                    if self.profile.compact and not self.settings.compact_prompt
                    else self.settings.profile_reason
                ),
            )
        )
        for notice in self.settings.notices:
            self._emit(Error(error_class="UntrustedConfig", message=notice))
        if self._resumed:
            self._resume()

    def submit(self, op: Op) -> None:
        """Hand an op to the session; it never blocks."""
        if isinstance(op, (UserPrompt, Continue, Compact, Undo, SetPlanMode)):
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
            self._emit(BudgetSet(budget=op.budget, default_budget=op.budget, turn_id=op.id))
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
        try:
            await self.tool_context.aclose()
            await self.model.aclose()
            await self.log.aclose()
        finally:
            self._events.put_nowait(None)

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    def _current(self) -> SessionState:
        return self.state

    def _emit(self, event: AnyEvent) -> None:
        """Log the event, apply it to the state, then publish it: the one place the state changes."""
        if self._closed:
            return
        after = apply(self.state, event)
        shown = with_totals(event, after)  # as front ends and the log get it
        logged = self.log.append(shown)  # once it failed, it fails again: nothing goes on unlogged
        if logged is not shown:  # secrets were redacted in the log: fold what a resume will read
            after = apply(self.state, logged)
        self.state = after
        self._events.put_nowait(shown)
        if isinstance(event, UserMessage) and event.purpose == "correction":
            kept = self.profile.compact or self.settings.profile_chosen
            reason = None if kept else early_failures(after)
            if reason is not None:
                self._move_to_small(reason)

    def _publish_unlogged(self, event: AnyEvent) -> None:
        """Hand front ends an event the broken log cannot take: how the session ended."""
        self.state = apply(self.state, event)
        self._events.put_nowait(with_totals(event, self.state))

    def _resume(self) -> None:
        """Close the turn a dead process left open, and grant the task a fresh budget on top of what it used."""
        state = self.state
        if state.task_open or unanswered_calls(state.history):
            self._emit(TurnAborted(turn_id=state.turn_id, reason="crashed"))
        grant = self._resume_grant()
        budget = None if grant is None else state.task_tokens + grant
        default = self.settings.budget if self.settings.budget is not None else state.default_budget
        self._emit(BudgetSet(budget=budget, default_budget=default, reason="resume"))

    def _resume_grant(self) -> int | None:
        """As much as a new run would get: --budget (or the config's), the session's /budget, an estimate."""
        if self.settings.budget is not None:
            return self.settings.budget
        if self.state.default_budget is not None:
            return self.state.default_budget
        if not self.settings.auto_budget or not self.state.task_prompt:
            return None
        return auto_budget(self.state.task_prompt, count_repo_files(self.root))

    async def _work_loop(self) -> None:
        try:
            await self._start_mcp()
            await self.loop.hooks.session_start("resume" if self._resumed else "startup")
        except SessionLogError:
            pass  # the first turn reports it
        while True:
            item = await self._work.get()
            if isinstance(item, SetPlanMode):  # between turns, so no turn changes its mode midway
                work = self._set_plan_mode(item.active)
            elif isinstance(item, Compact | Undo):
                work = self._compact() if isinstance(item, Compact) else self._undo(item)
            else:
                work = self._run_task(item)
            turn = contextvars.copy_context()  # every event the turn's work makes carries its id
            turn.run(RUNNING_TURN.set, item.id)
            self._turn = asyncio.create_task(work, context=turn)
            await asyncio.wait([self._turn])
            if self._turn.cancelled():  # cancelled before it ran
                self._abort_unstarted(item)

    async def _start_mcp(self) -> None:
        """MCP servers start before the first turn; one that fails is a notice, and its tools are left out."""
        if self.mcp is not None:
            await self.mcp.start()
            self.registry.add(self.mcp.tools())
            for problem in self.mcp.problems():
                self._emit(Error(error_class="McpServerError", message=problem))

    def _drop_queued_work(self) -> None:
        """An interrupt with no turn running: the turns still waiting are aborted."""
        while not self._work.empty():
            self._abort_unstarted(self._work.get_nowait())

    def _abort_unstarted(self, op: TurnOp) -> None:
        try:
            self._emit(TurnAborted(turn_id=op.id))
        except SessionLogError:
            pass  # _finish reports it
        if isinstance(op, UserPrompt | Continue):
            self._finish("interrupted", "", "interrupted before it started", op.id)

    def _finish(
        self, status: FinishStatus, final: str, reason: str, turn_id: str | None = None
    ) -> None:
        """The task's session.finished (of the running turn, or of `turn_id`, a turn that never ran); when
        the log cannot take it, an error end published unlogged."""
        state = self.state
        end = SessionFinished(
            status=status,
            final_message=final,
            usage=state.usage,
            steps=state.steps,
            cost=state.cost,
            reason=reason,
            turn_id=running_turn() if turn_id is None else turn_id,
        )
        try:
            self._emit(end)
            self.log.sync_soon()
        except SessionLogError as exc:
            error = Error(error_class="SessionLogError", message=str(exc), fatal=True)
            self._publish_unlogged(error)
            failed = {"status": "error", "final_message": "", "reason": str(exc)}
            self._publish_unlogged(end.model_copy(update=failed))

    async def _compact(self) -> None:
        try:
            await self._compact_now()
        except SessionLogError:
            self._finish("error", "", "")  # reports the log's failure

    async def _compact_now(self) -> None:
        self._emit(TurnStarted(kind="compact"))
        try:
            await self.context.compact(reason="requested")
        except ProviderError as exc:
            self._emit(Error(error_class=error_class_of(exc.error_class), message=str(exc)))
        except asyncio.CancelledError:
            self._emit(TurnAborted())
        except SessionLogError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug of ours: logged with its traceback, the session goes on
            self._emit(
                internal_error_event(exc, self.id, self.redactor.redact).model_copy(
                    update={"fatal": False}
                )
            )

    async def _set_plan_mode(self, active: bool) -> None:
        """plan_mode.changed, unless the session is in that mode already."""
        if self.state.plan_mode != active:
            self._emit(PlanModeChanged(active=active))

    async def _undo(self, op: Undo) -> None:
        """keel's /undo, recorded (the model's next turn is told what it restored); the restored files'
        stamps become keel's, so the model's next write of one is not refused as someone else's change."""
        try:
            undone = await asyncio.to_thread(undo_in_session, self.root, op.checkpoint)
        except CheckpointError as exc:
            self._emit(Error(error_class="CheckpointError", message=f"undo failed: {exc}"))
            return
        before = snapshot(self.tool_context)
        self.tool_context.note_restored([self.tool_context.root / f.path for f in undone.files])
        self._emit(undone.model_copy(update={"seen": seen_since(self.tool_context, before)}))

    async def _run_task(self, op: UserPrompt | Continue) -> None:
        """Run a task to its end; every way it can end is turned into one session.finished here."""
        try:
            status, final, reason = await self._task_outcome(op)
        except SessionLogError:  # _finish reports it: the log cannot take session.finished either
            status, final, reason = "error", "", ""
        self._finish(status, final, reason)

    async def _task_outcome(self, op: UserPrompt | Continue) -> tuple[FinishStatus, str, str]:
        """How the task ended: its status, final message and reason; a log that fails raises SessionLogError."""
        try:
            self._emit(TurnStarted(kind="task"))
            if self.checkpoints is not None:
                self.checkpoints.new_turn()
            if isinstance(op, UserPrompt):
                # `/NAME args`: the prompt of a Markdown command (agent/commands)
                prompt = expand_prompt(self.root, op.text)
                text, blocked = await self.loop.hooks.prompt_submitted(prompt)
                if blocked is not None:
                    return "error", "", f"a UserPromptSubmit hook blocked the prompt: {blocked}"
                self._emit(UserMessage(text=text))
                for image in prompt_images(op.images, self.root, self.tool_context.takes_images):
                    self._emit(image)
                self._estimate_budget(op.text)
            await self.loop.run()
        except TaskComplete as done:
            return "completed", done.final_message, ""
        except LimitExceeded as stop:
            return stop.status, "", stop.reason
        except ProviderError as exc:
            error_class = error_class_of(exc.error_class)
            self._emit(Error(error_class=error_class, message=str(exc), fatal=True))
            return "error", "", f"{exc.error_class}: {exc}"
        except asyncio.CancelledError:
            self._emit(TurnAborted())
            return "interrupted", "", "interrupted by the user"
        except SessionLogError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug of ours ends the task cleanly; its traceback is logged
            error = internal_error_event(exc, self.id, self.redactor.redact)
            self._emit(error)
            return "error", "", error.message
        return "completed", "", ""

    def _estimate_budget(self, prompt: str) -> None:
        """A task with no budget set (flag, config, /budget) gets the estimate from the task."""
        if self.state.default_budget is not None or not self.settings.auto_budget:
            return
        files = count_repo_files(self.root)  # reads the index header: no thread or process needed
        self._emit(BudgetSet(budget=auto_budget(prompt, files), reason="estimate"))

    def _checkpoint_failed(self, message: str) -> None:
        self._emit(
            Error(
                error_class="CheckpointError",
                message=f"{message}; `keel undo` will not cover this session",
            )
        )

    async def _ask_person(
        self, call: ToolCall, tool: Tool[Any], arguments: dict[str, Any]
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
            decision = await future
        finally:
            self._pending_approvals.pop(call.id, None)
        self._emit(ApprovalDecided(call_id=call.id, name=tool.name, decision=decision))
        return decision
