"""The one handle front ends hold: submit ops, iterate events; the loop runs behind it."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Self

from keel.agent.core.commands.markdown import expand_prompt
from keel.agent.core.diagnostics import internal_error_event
from keel.agent.core.errors import ProviderError, SessionLogError
from keel.agent.core.files_seen import seen_since, snapshot
from keel.agent.core.fold import apply, unanswered_calls, with_totals
from keel.agent.core.git.checkpoints import CheckpointError
from keel.agent.core.git.undo import undo_in_session
from keel.agent.core.images.attach import prompt_images
from keel.agent.core.loop import AgentLoop, FinalAnswer
from keel.agent.core.model.client import ChatModel
from keel.agent.core.profile import ModelProfile
from keel.agent.core.profile_switch import early_failures
from keel.agent.core.protocol import (
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
    SetBudget,
    SetPlanMode,
    Shutdown,
    TaskFinished,
    ToolCall,
    TurnAborted,
    TurnStarted,
    Undo,
    UserMessage,
    UserPrompt,
    error_class_of,
    running_turn,
)
from keel.agent.core.services import SessionCallbacks, assemble_services
from keel.agent.core.session_budget import estimated_budget, resume_budget
from keel.agent.core.settings import SessionSettings
from keel.agent.core.state import LimitExceeded, SessionState
from keel.agent.core.strategies.base import Strategy
from keel.tools.base import Tool
from keel.tools.registry import ToolRegistry

TurnOp = UserPrompt | Continue | Compact | Undo | SetPlanMode


class Session:
    """One agent session. `submit` ops, `async for event in events()`; `close` ends it and its children.

    Every event is logged, applied to `state` (keel.agent.core.fold.apply) and then published, in that order; the
    loop and the context manager only read the state and emit events.
    """

    def __init__(
        self,
        settings: SessionSettings,
        tools: list[Tool[Any]] | None = None,
        resume: Path | None = None,
        model: ChatModel | None = None,
    ) -> None:
        """`tools` replace the strategy's; `model` the litellm client (an in-process model, e.g. for benchmarks).
        Its services are assembled in one place (keel.agent.core.services) and the loop runs on them."""
        self.settings = settings
        callbacks = SessionCallbacks(
            self._emit, self._current, self._ask_person, self._checkpoint_failed
        )
        self.services = services = assemble_services(settings, callbacks, tools, resume, model)
        self.id, self.root, self.window = services.id, services.root, services.window
        self.redactor, self.log = services.redactor, services.log
        self.state = services.initial_state
        self.tool_context, self.mcp = services.tool_context, services.mcp
        self.model, self.context = services.model, services.context
        self.approvals, self.checkpoints = services.approvals, services.checkpoints
        self._resumed = services.resumed
        self.loop = AgentLoop(services)
        self._events: asyncio.Queue[AnyEvent | None] = asyncio.Queue()
        self._work: asyncio.Queue[TurnOp] = asyncio.Queue()
        self._pending_approvals: dict[str, asyncio.Future[ApprovalDecision]] = {}
        self._turn: asyncio.Task[None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = False
        self._prompts = services.prompts  # the last logged call's ids: the next logs what it adds

    @property
    def strategy(self) -> Strategy:
        """The strategy for the session's model now (it changes when the session moves to the small profile)."""
        return self.services.strategy

    @strategy.setter
    def strategy(self, strategy: Strategy) -> None:
        self.services.strategy = strategy

    @property
    def profile(self) -> ModelProfile:
        return self.services.profile

    @property
    def registry(self) -> ToolRegistry:
        return self.services.registry

    def _move_to_small(self, reason: str) -> None:
        """profile.changed, then the small profile from the next model call on (SessionServices.move_to_small)."""
        self._emit(ProfileChanged(reason=reason))
        self.services.move_to_small()

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
        self._emit(self.services.started(self.state))
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
        event = self._prompts.logged(event)  # a call's prompt ids: those after the shared ones
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
        self._emit(resume_budget(self.settings, state, self.root))

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
        end = TaskFinished(
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
                # `/NAME args`: the prompt of a Markdown command (agent/core/commands)
                prompt = expand_prompt(self.root, op.text)
                text, blocked = await self.loop.hooks.prompt_submitted(prompt)
                if blocked is not None:
                    return "error", "", f"a UserPromptSubmit hook blocked the prompt: {blocked}"
                self._emit(UserMessage(text=text))
                for image in prompt_images(op.images, self.root, self.tool_context.takes_images):
                    self._emit(image)
                estimate = estimated_budget(self.settings, self.state, op.text, self.root)
                if estimate is not None:
                    self._emit(estimate)
            await self.loop.run()
        except FinalAnswer as done:
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

    def _checkpoint_failed(self, message: str) -> None:
        note = f"{message}; `keel undo` will not cover this session"
        self._emit(Error(error_class="CheckpointError", message=note))

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
