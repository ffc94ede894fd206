"""The main screen: sessions on the left, the selected transcript and the prompt box, a status bar."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input

from keel.tui import format as fmt
from keel.tui.agents import AgentChanged, AgentHandle, NewAgentRequest
from keel.tui.pool import AgentPool, FanOutError
from keel.tui.widgets.prompt_input import PromptInput
from keel.tui.widgets.session_list import SessionList
from keel.tui.widgets.status_bar import StatusBar
from keel.tui.widgets.todo_panel import TodoPanel
from keel.tui.widgets.transcript_view import TranscriptView

if TYPE_CHECKING:  # the screens not on the first frame load when first opened
    from keel.agent.core.protocol import ApprovalDecision
    from keel.tui.app import KeelApp
    from keel.tui.commands import SlashCommand
    from keel.tui.past_sessions import PastSession
    from keel.tui.screens.side_by_side import SideBySideScreen

PLACEHOLDER = "Ask keel…  (Enter sends · Esc interrupts · Ctrl+N new agent · /help)"


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt"),
        Binding("ctrl+n", "new_session", "New agent"),
        Binding("f2", "side_by_side", "Side by side"),
        Binding("f4", "plan_mode", "Plan mode"),
        Binding("ctrl+pageup,alt+up", "cycle(-1)", "Previous session", show=False),
        Binding("ctrl+pagedown,alt+down", "cycle(1)", "Next session", show=False),
        Binding("f1", "help", "Help"),
        Binding("pageup", "scroll_transcript(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_transcript(1)", "Scroll down", show=False),
        Binding("tab", "next_area", "Next area", show=False),
    ]
    app: KeelApp

    def __init__(self, pool: AgentPool) -> None:
        super().__init__()
        self.pool = pool
        self.selected = pool.handles[0]
        self.side: SideBySideScreen | None = None  # while the side-by-side view is open
        self.past: list[PastSession] = []  # what /sessions listed last, for /sessions N

    def compose(self) -> ComposeResult:
        # The status line and the session list split off the edges, in this order, rather than nest
        # containers: every container is one more layer to lay out and paint on each append.
        yield StatusBar(id="status")
        yield SessionList(self.pool.handles, id="sessions")
        yield TodoPanel(id="todo")
        yield TranscriptView(self.selected.transcript, id="transcript")
        yield PromptInput(self.pool.cwd, placeholder=PLACEHOLDER, id="prompt")

    @property
    def sessions(self) -> SessionList:
        return self.query_one(SessionList)

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    class Painted(Message):
        """The screen's first frame is drawn: what can wait for it starts now."""

    def on_mount(self) -> None:
        """The rows and the transcript came composed with the screen: nothing to mount before a paint."""
        handle = self.selected
        self.sessions.highlight_handle(handle)
        self.status.show_stats(handle.name, handle.stats)
        self.query_one(TodoPanel).show_items(handle.transcript.todo)
        self.offer_approval(handle)
        self.query_one(PromptInput).focus()
        self.call_after_refresh(self.post_message, self.Painted())

    async def select(self, handle: AgentHandle) -> None:
        self.selected = handle
        self.sessions.highlight_handle(handle)
        await self.transcript.show(handle.transcript)
        self.status.show_stats(handle.name, handle.stats)
        self.query_one(TodoPanel).show_items(handle.transcript.todo)
        self.offer_approval(handle)
        if handle.transcript.plan:  # a plan it made while another session was on screen
            from keel.tui.planning import offer_plan

            offer_plan(self, handle)

    # ------------------------------------------------------------ events from the sessions

    async def on_agent_changed(self, message: AgentChanged) -> None:
        handle = message.handle
        kinds = {change.kind for change in message.changes}
        if kinds & {"stats", "approval"}:
            self.sessions.refresh_handle(handle)
        if handle is self.selected:
            if "stats" in kinds:
                self.status.show_stats(handle.name, handle.stats)
            if "todo" in kinds:
                self.query_one(TodoPanel).show_items(handle.transcript.todo)
            for change in message.changes:
                if change.kind == "added":
                    await self.transcript.added(change.index)
                elif change.kind == "updated":
                    await self.transcript.updated(change.index)
                elif change.kind == "delta":
                    await self.transcript.streamed(change.index, change.text)
        if self.side is not None:
            await self.side.apply(handle, message.changes)
        if "approval" in kinds:
            self.offer_approval(handle)
        self._drop_answered_approval()
        if "plan" in kinds:
            from keel.tui.planning import offer_plan

            offer_plan(self, handle)

    def offer_approval(self, handle: AgentHandle) -> None:
        """Ask now when the session is on screen; otherwise flag it and say so."""
        if not handle.pending_approvals:
            return
        request = handle.pending_approvals[0]
        if handle is not self.selected:
            self.notify(
                f"{handle.name} waits for approval to run {request.name}", severity="warning"
            )
            return
        if self.app.screen is not self:
            return

        def answer(decision: ApprovalDecision | None) -> None:
            if decision is not None:
                handle.approve(request.call_id, decision)
            self.offer_approval(handle)

        from keel.tui.screens.approval_modal import ApprovalModal

        self.app.push_screen(ApprovalModal(request, handle.name), callback=answer)

    def _drop_answered_approval(self) -> None:
        """An interrupt or a finished turn can settle a request while its modal is still open."""
        from keel.tui.screens.approval_modal import ApprovalModal

        modal = self.app.screen
        if isinstance(modal, ApprovalModal):
            pending = {a.call_id for a in self.selected.pending_approvals}
            if modal.call_id not in pending:
                modal.dismiss(None)

    def on_screen_resume(self) -> None:
        """Back from a dialog: a request that arrived meanwhile is asked now."""
        self.offer_approval(self.selected)

    async def on_session_list_picked(self, message: SessionList.Picked) -> None:
        await self.select(message.handle)
        self.query_one(PromptInput).focus()

    # ------------------------------------------------------------ the prompt box

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if not isinstance(event.input, PromptInput):
            return
        event.stop()
        text = event.value.strip()
        if not text:
            return
        event.input.remember(text)
        event.input.value = ""
        from keel.agent.core.api import markdown_commands  # not needed for the first frame
        from keel.tui.commands import CommandError, parse_command

        try:
            command = parse_command(text, markdown_commands(self.selected.settings.cwd))
            if command is None:
                self.send_prompt(self.selected, text)
            else:
                await self.run_command(command)
        except CommandError as exc:
            self.selected.note(str(exc), "error")

    def send_prompt(self, handle: AgentHandle, text: str) -> None:
        if not handle.stats.model:
            handle.note(
                "no model is configured: set one with /model NAME (e.g. /model openai/gpt-4o-mini)",
                "error",
            )
            return
        if handle.busy:
            handle.note("queued: it runs when the current turn ends (Esc interrupts the turn)")
        elif not handle.started:
            handle.note(f"starting a session with {handle.stats.model}…")
        from keel.tui.image_paths import image_paths

        handle.prompt(text, image_paths(text, handle.settings.cwd))
        self.app.start(handle)

    async def run_command(self, command: SlashCommand) -> None:
        from keel.tui.commands import parse_budget, parse_fan, parse_session_numbers
        from keel.tui.slash_actions import past_sessions, set_model, undo

        handle, argument = self.selected, command.argument
        if command.name == "new":
            self.action_new_session()
        elif command.name == "fan":
            fan = parse_fan(argument)
            self.fan_out(NewAgentRequest(self.pool.model, task=fan.prompt, copies=fan.count))
        elif command.name == "side":
            numbers = parse_session_numbers(argument, len(self.pool.handles))
            self.action_side_by_side([self.pool.handles[number - 1] for number in numbers])
        elif command.name == "model":
            set_model(self, handle, argument)
        elif command.name == "compact":
            if handle.session is None:
                handle.note("nothing to compact yet: the session has not started")
            else:
                handle.compact()
                handle.note("compacting the context…")
        elif command.name == "budget":
            budget = parse_budget(argument)
            handle.set_budget(budget)
            handle.note(f"budget set to {budget:,} tokens" if budget else "budget removed")
        elif command.name == "undo":
            await undo(handle, argument)
        elif command.name == "sessions":
            await past_sessions(self, handle, argument)
        elif command.name == "plan":
            from keel.tui.planning import plan_command

            plan_command(self, handle, argument)
        elif command.name == "help":
            self.action_help()
        elif command.name in ("quit", "exit"):
            await self.app.action_quit()  # what Ctrl+Q does: running agents are stopped

    # ------------------------------------------------------------ actions

    def action_interrupt(self) -> None:
        if self.selected.interrupt():
            self.selected.note("interrupting…", "warning")

    def action_plan_mode(self) -> None:
        """F4: plan mode on or off for the selected session."""
        from keel.tui.planning import switch

        switch(self.selected, not self.selected.stats.plan_mode)

    def action_new_session(self) -> None:
        from keel.tui.screens.new_session_dialog import NewSessionDialog

        name = f"agent {len(self.pool.handles) + 1}"
        self.app.push_screen(NewSessionDialog(self.pool.model, name), callback=self._create_agent)

    async def _create_agent(self, request: NewAgentRequest | None) -> None:
        if request is None:
            return
        if request.copies > 1:
            self.fan_out(request)
            return
        try:
            handle = await self.pool.create(request)
        except Exception as exc:  # noqa: BLE001 - a failed worktree is the person's to see and fix
            self.notify(f"could not start the agent: {exc}", severity="error")
            return
        await self.sessions.add_handle(handle)
        await self.select(handle)
        if request.task:
            self.send_prompt(handle, request.task)

    async def action_cycle(self, step: int) -> None:
        handles = self.pool.handles
        await self.select(handles[(handles.index(self.selected) + step) % len(handles)])

    def action_next_area(self) -> None:
        """Tab goes prompt → session list → the transcript's newest row → prompt: the prompt box is never
        more than two presses away, however many tool rows there are (Shift+Tab walks them one by one)."""
        prompt = self.query_one(PromptInput)
        rows = [w for w in self.focus_chain if self.transcript in w.ancestors_with_self]
        if self.focused is prompt:
            lists = [self.sessions] if self.sessions.display else []
            target = [*lists, *rows[-1:], prompt][0]
        elif self.focused is self.sessions:
            target = rows[-1] if rows else prompt
        else:
            target = prompt
        target.focus()

    def on_key(self, event: events.Key) -> None:
        """A character typed where nothing takes it (the session list, the transcript) goes to the prompt
        box, and the focus with it, instead of being lost."""
        prompt = self.query_one(PromptInput)
        if event.is_printable and event.character and not isinstance(self.focused, Input):
            event.stop()
            prompt.focus()
            prompt.insert_text_at_cursor(event.character)

    def action_scroll_transcript(self, pages: int) -> None:
        """PageUp and PageDown scroll the transcript wherever the focus is (the prompt box, usually)."""
        if pages < 0:
            self.transcript.scroll_page_up(animate=False)
        else:
            self.transcript.scroll_page_down(animate=False)

    def action_help(self) -> None:
        from keel.tui.screens.help_screen import HelpScreen

        self.app.push_screen(HelpScreen(self.selected.settings.cwd))

    # ------------------------------------------------------------ many agents on one task, side by side

    def fan_out(self, request: NewAgentRequest) -> None:
        """Start `request.copies` agents on its task in worktrees of their own, in a worker: the screen stays live."""
        origin = self.selected
        if not request.model:
            origin.note(
                "no model is configured: set one with /model NAME (e.g. /model openai/gpt-4o-mini)",
                "error",
            )
            return
        origin.note(f"creating {request.copies} git worktrees…")
        self.run_worker(self._fan_out(origin, request), group="fan-out", exit_on_error=False)

    async def _fan_out(self, origin: AgentHandle, request: NewAgentRequest) -> None:
        try:
            group = await self.pool.fan_out(request)
        except FanOutError as exc:
            origin.note(str(exc), "error")
            return
        for handle in group.handles:
            await self.sessions.add_handle(handle)
            self.send_prompt(handle, request.task)
        names = ", ".join(handle.name for handle in group.handles)
        origin.note(
            f"started {fmt.plural(len(group.handles), 'agent')} on {request.task!r}, each on its own branch: "
            f"{names} · F2 shows them side by side",
            "success",
        )
        if self.app.screen is self:  # not over a dialog the person is answering
            self.action_side_by_side(group.handles, group.title)

    def action_side_by_side(
        self, handles: list[AgentHandle] | None = None, title: str = ""
    ) -> None:
        """Chosen sessions, else the selected one's group, else the newest group, else every session."""
        if self.side is not None:
            return
        if not handles:
            groups = self.pool.groups
            group = self.pool.group_of(self.selected) or (groups[-1] if groups else None)
            if group is not None:
                handles, title = group.handles, group.title
            else:
                from keel.tui.commands import MAX_COPIES

                handles = self.pool.handles[:MAX_COPIES]
        from keel.tui.screens.side_by_side import SideBySideScreen

        self.side = SideBySideScreen(
            handles, title or f"{fmt.plural(len(handles), 'session')} side by side"
        )
        self.app.push_screen(self.side, callback=self._back_from_side)

    async def _back_from_side(self, handle: AgentHandle | None) -> None:
        self.side = None
        if handle is not None and handle is not self.selected:
            await self.select(handle)
        self.query_one(PromptInput).focus()
