"""bench/tui: latency of appending a message to a transcript of 10, 1,000 and 5,000 messages (goal: flat, ≤ 16 ms).

Each append goes the real way: an event folded into the transcript, the AgentChanged message, the
windowed TranscriptView mounting its widget (and dropping what scrolled out of its window), layout
and paint (headless). Measured as CPU time of the process from the append until the app is idle
again (the test pilot's pause, whose own cost grows with the widgets on screen, is included), so a
busy machine's waiting is not counted. The rows run interleaved, ROUNDS times, so a change in the
machine's load hits them alike; the goal is judged on the median. The baseline is the same append
at 10 messages; two more rows put it in context: a bare Textual app mounting one Static into an
anchored scrolling view (same screen size; Textual lays out and renders twice per append there,
keel once) and an unwindowed view at 1,000.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

# This file's own name would shadow the `tui` package: the repository comes first, bench/ last.
_BENCH = Path(__file__).resolve().parent
sys.path[:] = (
    [str(_BENCH.parent)]
    + [p for p in sys.path if Path(p or ".").resolve() != _BENCH]
    + [str(_BENCH)]
)

from _common import row
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from keel.agent.core.protocol import AssistantMessage, UserMessage
from keel.agent.core.settings import SessionSettings
from keel.tui.agents import AgentChanged
from keel.tui.app import KeelApp
from keel.tui.warmup import warm_up_core
from keel.tui.widgets.transcript_view import TranscriptView

APPENDS = 40
ROUNDS = 3
ANSWER = "The fix is in `calc.py`:\n\n- `add` returned **a - b**\n- it now returns `a + b`\n\nTests pass."
GOAL_MS = 16.0  # issue 6: flat and <= 16 ms, judged on the median (the p90 is printed beside it)
FLAT = 1.25  # "flat": no more than this times the 10-message baseline


def conversation(messages: int) -> list:
    events = []
    for number in range(messages // 2):
        events.append(UserMessage(text=f"question {number}: what does add() do?"))
        events.append(AssistantMessage(text=f"Answer {number}. {ANSWER}"))
    return events


async def append_latency(messages: int, window: int | None = None) -> list[float]:
    """CPU milliseconds per appended message, at a transcript of `messages` messages."""
    settings = SessionSettings(cwd=Path.cwd(), model="openai/any", interactive=True)
    app = KeelApp(settings, history=conversation(messages))
    samples = []
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.screen.query_one(TranscriptView)
        if window is not None:
            view.WINDOW = view.HARD_LIMIT = window
            view.FOLLOW_SCREENS = float("inf")  # nothing is trimmed while following either
            await view.show(app.pool.handles[0].transcript)
        await pilot.pause()
        handle = app.pool.handles[0]
        for number in range(APPENDS):
            event = (
                UserMessage(text=f"follow-up {number}")
                if number % 2 == 0
                else AssistantMessage(text=f"Follow-up answer {number}. {ANSWER}")
            )
            start = time.process_time()
            app.screen.post_message(AgentChanged(handle, handle.transcript.apply(event)))
            await pilot.pause()
            samples.append((time.process_time() - start) * 1000)
    return samples


class BareApp(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll()


async def bare_latency() -> list[float]:
    """What Textual itself costs to append one line to an anchored scrolling view and repaint."""
    app = BareApp()
    samples = []
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(VerticalScroll)
        view.anchor()
        await view.mount_all([Static(f"line {n}") for n in range(10)])
        await pilot.pause()
        for number in range(APPENDS):
            start = time.process_time()
            await view.mount(Static(f"appended {number}"))
            await pilot.pause()
            samples.append((time.process_time() - start) * 1000)
    return samples


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.9) - 1]


async def main() -> None:
    warm_up_core()
    sizes = (10, 1_000, 5_000)
    samples: dict[str, list[float]] = {"bare": [], **{str(size): [] for size in sizes}}
    for _ in range(ROUNDS):  # interleaved, so a change in the machine's load hits every row alike
        samples["bare"] += await bare_latency()
        for size in sizes:
            samples[str(size)] += await append_latency(size)
    print(
        f"tui append latency (CPU ms per message, {ROUNDS} x {APPENDS} appends each; median / p90)"
    )
    base_median, base_p90 = summary(samples["10"])
    row("10 messages (baseline)", f"{base_median:.1f} / {base_p90:.1f} ms", "1.00x")
    bare_median, bare_p90 = summary(samples["bare"])
    row(
        "bare Textual, one Static appended",
        f"{bare_median:.1f} / {bare_p90:.1f} ms",
        f"{bare_median / base_median:.2f}x baseline",
    )
    for size in sizes[1:]:
        median, p90 = summary(samples[str(size)])
        flat = median <= FLAT * base_median
        verdict = "met" if flat and median <= GOAL_MS and base_median <= GOAL_MS else "MISSED"
        row(
            f"{size:,} messages",
            f"{median:.1f} / {p90:.1f} ms",
            f"{median / base_median:.2f}x baseline   goal flat, median ≤ {GOAL_MS:.0f} ms: "
            + verdict,
        )
    median, p90 = summary(await append_latency(1_000, window=1_000_000))
    row(
        "1,000 messages, unwindowed (all mounted)",
        f"{median:.1f} / {p90:.1f} ms",
        f"{median / base_median:.2f}x baseline",
    )


if __name__ == "__main__":
    asyncio.run(main())
