"""The UI's handles on sessions: each owns its settings, its transcript and, once started, a core Session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from textual.message import Message

from keel.tui.first_settings import DeferredSettings, settled
from keel.tui.transcript import Change, NoticeLevel, SessionStats, Transcript

if TYPE_CHECKING:
    from keel.agent.core.protocol import AnyEvent, ApprovalDecision, ApprovalRequested, Op
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings

Notify = Callable[["AgentHandle", list[Change]], None]
Ready = Callable[[], Awaitable[None]]
MakeOp = Callable[[ModuleType], "Op"]


class AgentChanged(Message):
    """Posted to the main screen for every event a session produced."""

    def __init__(self, handle: AgentHandle, changes: list[Change]) -> None:
        super().__init__()
        self.handle = handle
        self.changes = changes


@dataclass(frozen=True)
class NewAgentRequest:
    """What the new-session dialog asks for."""

    model: str
    name: str = ""
    own_worktree: bool = False
    task: str = ""
    copies: int = 1  # over 1: each in its own worktree, all on `task`, named `<name>-1 … <name>-N`


class AgentHandle:
    """One session as the UI sees it. Ops submitted before its Session exists wait for it."""

    def __init__(
        self,
        number: int,
        settings: SessionSettings | DeferredSettings,
        notify: Notify,
        name: str = "",
        resume: Path | None = None,
        history: list[AnyEvent] | None = None,
    ) -> None:
        self.number = number
        self.name = name or f"agent {number}"
        self._settings = settings
        self.resume = resume
        self.transcript = Transcript(SessionStats(model=settings.model, budget=settings.budget))
        if history:
            for event in history:
                self.transcript.apply(event)
            self._say_how_it_continues(settings)
        else:
            self.transcript.note(f"workspace {settings.cwd} · type a task, or /help")
        self.session: Session | None = None
        self.pending_approvals: list[ApprovalRequested] = []
        self.starting = False
        self.branch = ""  # set when the agent works in its own git worktree
        self._notify = notify
        self._queued: list[MakeOp] = []

    def _say_how_it_continues(self, settings: SessionSettings | DeferredSettings) -> None:
        """A reopened session goes on with this UI's settings, not those it ran with (a headless run's
        full-auto approval): the transcript's last word on them is what applies now."""
        # deferred settings have no approval, and come without a history; a history without its
        # session's start (a test's) has nothing to correct
        approval, before = getattr(settings, "approval", ""), self.stats.approval
        if not approval or not before:
            return
        self.stats.approval = approval
        was = f" (it ran with {before})" if before != approval else ""
        self.transcript.note(
            f"reopened here: your next prompt continues it with approval: {approval}{was}"
        )

    @property
    def settings(self) -> SessionSettings:
        """Built on first use when they were deferred past the first paint."""
        if isinstance(self._settings, DeferredSettings):
            self._settings = settled(self._settings)
            if self.stats.model != self._settings.model:
                self.stats.model = self._settings.model
                self._notify(self, [Change("stats")])
        return self._settings

    @property
    def stats(self) -> SessionStats:
        return self.transcript.stats

    @property
    def busy(self) -> bool:
        return self.stats.status in ("running", "approval")

    @property
    def started(self) -> bool:
        return self.starting or self.session is not None

    def set_model(self, model: str, settings: SessionSettings) -> None:
        """Only before the session starts: the core fixes a session's model when it is created."""
        assert not self.started
        self._settings = settings
        self.stats.model = model
        self.stats.budget = settings.budget
        self._notify(self, [Change("stats")])

    def prompt(self, text: str, images: list[str] | None = None) -> None:
        """A task; `images` are image files sent with it (the core reads them, or says why not)."""
        self._send(lambda protocol: protocol.UserPrompt(text=text, images=images or []))
        self._notify(self, [self.transcript.set_status("running")])

    def compact(self) -> None:
        self._send(lambda protocol: protocol.Compact())

    def set_budget(self, budget: int | None) -> None:
        self._send(lambda protocol: protocol.SetBudget(budget=budget))
        self.stats.budget = budget
        self._notify(self, [Change("stats")])

    def undo(self, checkpoint: str) -> None:
        """keel's /undo, done by the session (it tells its model); undo.applied or an error says how it went."""
        self._send(lambda protocol: protocol.Undo(checkpoint=checkpoint))

    def set_plan_mode(self, active: bool) -> None:
        """Enter or leave plan mode; the session switches between turns (plan_mode.changed says when), the
        status bar shows the mode asked for at once."""
        self._send(lambda protocol: protocol.SetPlanMode(active=active))
        self.stats.plan_mode = active
        self._notify(self, [Change("stats")])

    def accept_plan(self, text: str) -> None:
        """The person's go-ahead: plan mode ends and the plan (as accepted or edited) is the next prompt,
        carried out by this same session with every tool."""
        self.transcript.plan = ""
        self.set_plan_mode(False)
        self.prompt(text)

    def approve(self, call_id: str, decision: ApprovalDecision) -> None:
        self.pending_approvals = [a for a in self.pending_approvals if a.call_id != call_id]
        self._send(lambda protocol: protocol.Approve(call_id=call_id, decision=decision))

    def interrupt(self) -> bool:
        """Stop the running turn (or drop prompts still waiting for the session); False if idle."""
        if not self.busy:
            return False
        if self.session is None:
            self._queued.clear()
            self._notify(self, [self.transcript.set_status("new")])
        else:
            self._send(lambda protocol: protocol.Interrupt())
        return True

    def _send(self, make_op: MakeOp) -> None:
        """Ops are built only once the core is loaded (importing it on this thread would race the warm-up)."""
        if self.session is None:
            self._queued.append(make_op)
            return
        from keel.agent.core import protocol

        self.session.submit(make_op(protocol))

    def show(self, event: AnyEvent) -> None:
        """An event from outside the session (the embedded model getting ready before it starts)."""
        self._notify(self, self.transcript.apply(event))

    def note(self, text: str, level: NoticeLevel = "info") -> None:
        """A line of the UI's own in this transcript (command results, errors of the person's input)."""
        self._notify(self, [self.transcript.note(text, level)])

    async def run(self, ready: Ready) -> None:
        """Create the Session once the core is loaded, hand it the waiting ops, and relay its events."""
        self.starting = True
        try:
            await ready()
            from keel.agent.core.api import ready_model
            from keel.agent.core.session import Session

            await ready_model(self.settings)
            session = Session(self.settings, resume=self.resume)
        except Exception as exc:  # noqa: BLE001 - a bad setting must show in the transcript, not kill the UI
            self.starting = False
            self._queued.clear()
            text = f"cannot start the session: {type(exc).__name__}: {exc}"
            self._notify(
                self, [self.transcript.note(text, "error"), self.transcript.set_status("error")]
            )
            return
        self.session, self.starting = session, False
        session.start()
        from keel.agent.core import protocol

        for make_op in self._queued:
            session.submit(make_op(protocol))
        self._queued.clear()
        try:
            async for event in session.events():
                self._track_approvals(event)
                self._notify(self, self.transcript.apply(event))
        except Exception as exc:  # a bug in showing an event must not silently stop the relay
            self.note(f"the UI failed on an event: {type(exc).__name__}: {exc}", "error")
            raise

    def _track_approvals(self, event: AnyEvent) -> None:
        if event.type == "approval.requested":
            self.pending_approvals.append(event)
        elif event.type == "tool.finished":
            self.pending_approvals = [
                a for a in self.pending_approvals if a.call_id != event.call_id
            ]
        elif event.type == "session.finished":
            self.pending_approvals = []

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
