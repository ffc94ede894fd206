"""Plan mode in the TUI: /plan, the key that switches it, and the plan offered for the person to accept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from keel.tui.agents import AgentHandle

if TYPE_CHECKING:
    from keel.tui.screens.main_screen import MainScreen


def plan_command(screen: MainScreen, handle: AgentHandle, argument: str) -> None:
    """`/plan` enters plan mode, `/plan PROMPT` enters it and sends the prompt, `/plan off` leaves it."""
    if argument.lower() == "off":
        switch(handle, False)
        return
    if not handle.stats.plan_mode:
        switch(handle, True)
    elif not argument:
        handle.note("already in plan mode: /plan off (or F4) leaves it")
    if argument:
        screen.send_prompt(handle, argument)


def switch(handle: AgentHandle, active: bool) -> None:
    """Ask the session to enter or leave plan mode, and say what that means."""
    handle.set_plan_mode(active)
    if not handle.started:
        state = "on" if active else "off"
        handle.note(f"plan mode {state} from your first prompt")


def offer_plan(screen: MainScreen, handle: AgentHandle) -> None:
    """A plan waiting for the person opens for review when its session is on screen."""
    if (
        not handle.transcript.plan
        or handle is not screen.selected
        or screen.app.screen is not screen
    ):
        return
    from keel.tui.screens.plan_review import PlanReview

    def decided(text: str | None) -> None:
        if text is None:
            handle.transcript.plan = ""
            handle.note("still in plan mode: say what to change, or /plan off (F4) to leave it")
        else:
            handle.accept_plan(text)
            screen.app.start(handle)

    screen.app.push_screen(PlanReview(handle.transcript.plan, handle.name), callback=decided)
