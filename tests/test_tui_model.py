"""The TUI's pure parts: the transcript built from events, slash commands, history; and the windowed view."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tui_support import fixed_history, wait_until

from keel.agent.core.config import KeelConfig
from keel.agent.core.model.local.catalog import default_model
from keel.agent.core.protocol import (
    ApprovalRequested,
    AssistantDelta,
    AssistantMessage,
    BudgetUpdated,
    Error,
    ModelRetry,
    ProfileChanged,
    TaskFinished,
    TokenUsage,
    ToolFinished,
    ToolStarted,
    UserMessage,
)
from keel.agent.core.settings import SessionSettings
from keel.tui import format as fmt
from keel.tui.app import KeelApp, initial_settings
from keel.tui.transcript import (
    AssistantEntry,
    Change,
    NoticeEntry,
    SessionStats,
    ToolEntry,
    Transcript,
    UserEntry,
)
from keel.tui.warmup import warm_up_core
from keel.tui.widgets.earlier_marker import EarlierMarker
from keel.tui.widgets.status_bar import status_text
from keel.tui.widgets.transcript_view import TranscriptView


def new_transcript() -> Transcript:
    return Transcript(SessionStats(model="openai/any"))


def test_deltas_stream_into_one_answer_that_the_message_settles():
    transcript = new_transcript()
    assert transcript.apply(AssistantDelta(text="Hel")) == [Change("added", 0)]
    assert transcript.apply(AssistantDelta(text="lo")) == [Change("delta", 0, "lo")]
    assert transcript.entries == [AssistantEntry("Hello", streaming=True)]
    changes = transcript.apply(AssistantMessage(text="Hello.", cost=0.5))
    assert Change("updated", 0) in changes and Change("stats") in changes
    assert transcript.entries == [AssistantEntry("Hello.")] and transcript.stats.cost == 0.5
    transcript.apply(AssistantDelta(text="Next"))
    assert len(transcript.entries) == 2, "a new model call starts a new answer"


def test_a_retry_ends_the_cut_stream():
    transcript = new_transcript()
    transcript.apply(AssistantDelta(text="partial"))
    transcript.apply(
        ModelRetry(attempt=1, max_attempts=4, error_class="RateLimitError", message="429", delay=1)
    )
    transcript.apply(AssistantDelta(text="again"))
    answers = [e for e in transcript.entries if isinstance(e, AssistantEntry)]
    assert [(a.text, a.streaming) for a in answers] == [("partial", False), ("again", True)]
    assert "retrying in 1.0s (1/4)" in transcript.entries[1].text


def test_tool_calls_move_through_approval_to_their_result():
    transcript = new_transcript()
    transcript.apply(UserMessage(text="run it"))
    assert transcript.stats.status == "running"
    transcript.apply(ToolStarted(call_id="c1", name="run_command", arguments={"command": "ls"}))
    transcript.apply(
        ApprovalRequested(call_id="c1", name="run_command", arguments={"command": "ls"}, reason="r")
    )
    tool = transcript.entries[1]
    assert (
        isinstance(tool, ToolEntry)
        and tool.state == "approval"
        and transcript.stats.status == "approval"
    )
    transcript.apply(
        ToolFinished(call_id="c1", name="run_command", status="denied", output="not approved")
    )
    assert tool.state == "denied" and transcript.stats.status == "running"
    transcript.apply(ToolStarted(call_id="c2", name="edit_file", arguments={"path": "a.py"}))
    transcript.apply(ToolFinished(call_id="c2", name="edit_file", ok=True, output="ok", diff="+x"))
    assert transcript.entries[2] == ToolEntry("c2", "edit_file", {"path": "a.py"}, "ok", "ok", "+x")


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("completed", "done"),
        ("interrupted", "interrupted"),
        ("budget_exhausted", "stopped"),
        ("error", "error"),
    ],
)
def test_how_a_task_ends_sets_the_status(status, shown):
    transcript = new_transcript()
    usage = TokenUsage(total_tokens=1234)
    transcript.apply(
        TaskFinished(
            status=status, final_message="", usage=usage, steps=3, reason="why", task_usage=usage
        )
    )
    assert transcript.stats.status == shown and transcript.stats.used == 1234
    assert "this task: 3 steps, 1.2k tokens" in transcript.entries[-1].text


def test_the_end_line_and_the_status_bar_say_the_task_and_the_session_apart():
    """A second task's figures are its own; the session's total is said as the session's."""
    transcript = new_transcript()
    stats = transcript.stats
    first = TokenUsage(total_tokens=55_900)
    transcript.apply(UserMessage(text="first task"))
    transcript.apply(BudgetUpdated(used=55_900, budget=None, task_usage=first, session_usage=first))
    transcript.apply(
        TaskFinished(status="completed", final_message="", usage=first, steps=9, task_usage=first)
    )
    transcript.apply(UserMessage(text="second task"))
    assert stats.used == 0, "a new task starts from zero"
    for used in (2_900, 4_000):
        task, session = TokenUsage(total_tokens=used), TokenUsage(total_tokens=55_900 + used)
        transcript.apply(
            BudgetUpdated(used=used, budget=50_000, task_usage=task, session_usage=session)
        )
        bar = status_text("agent 1", stats).plain
        assert f"task {fmt.tokens(used)}/50k tokens" in bar
        assert f"session {fmt.tokens(55_900 + used)} tokens" in bar
    transcript.apply(
        TaskFinished(
            status="interrupted",
            final_message="",
            usage=session,
            steps=1,
            task_usage=task,
            session_usage=session,
        )
    )
    end = transcript.entries[-1].text
    assert end.startswith("interrupted · this task: 1 step, 4k tokens")
    assert "session: 59.9k tokens" in end
    assert stats.used == 4_000 and stats.session_tokens == 59_900
    assert "task 4k/50k tokens" in status_text("agent 1", stats).plain


def test_a_fatal_error_is_an_error_status_and_unknown_events_are_ignored():
    transcript = new_transcript()
    transcript.apply(Error(error_class="APIConnectionError", message="refused", fatal=True))
    assert transcript.stats.status == "error" and transcript.entries[0].level == "error"

    class Unknown:
        type = "something.new"

    assert transcript.apply(Unknown()) == []


def test_a_replayed_history_rebuilds_the_transcript():
    transcript = new_transcript()
    for event in fixed_history():
        transcript.apply(event)
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "NoticeEntry",
        "UserEntry",
        "AssistantEntry",
        "ToolEntry",
        "ToolEntry",
        "AssistantEntry",
        "NoticeEntry",
    ]
    assert transcript.stats.status == "done" and transcript.stats.budget == 50_000
    assert transcript.stats.context_tokens == 2_950 and transcript.stats.cost == 0.0042


def many_messages(count: int) -> list:
    events = []
    for number in range(count // 2):
        events.append(UserMessage(text=f"question {number}"))
        events.append(AssistantMessage(text=f"answer {number}"))
    return events


async def test_long_transcripts_mount_only_a_window(tmp_path):
    warm_up_core()  # otherwise the app's warm-up thread imports litellm while this test runs
    settings = SessionSettings(cwd=Path(tmp_path), model="openai/any", interactive=True)
    app = KeelApp(settings, history=many_messages(300))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.screen.query_one(TranscriptView)
        handle = app.pool.handles[0]
        assert view.mounted_entries() == TranscriptView.WINDOW
        assert view.end == len(handle.transcript.entries) == 300
        marker = app.screen.query_one(EarlierMarker)
        assert marker.display and marker.hidden == 300 - TranscriptView.WINDOW

        for number in range(20):  # following the end, about FOLLOW_SCREENS screens stay mounted
            handle.note(f"note {number}")
            await pilot.pause()
        mounted = view.mounted_entries()
        assert view.end == 320 and mounted < TranscriptView.WINDOW
        heights = [widget.outer_size.height + 1 for widget in view.children[1:]]  # 1: the margin
        keep = view.container_size.height * TranscriptView.FOLLOW_SCREENS
        assert keep <= sum(heights)  # what is within FOLLOW_SCREENS is never trimmed
        # fewer than TRIM_BATCH entries lie wholly above it (+ 2: the one entry across the line)
        assert sum(heights[TranscriptView.TRIM_BATCH :]) <= keep + 2
        assert marker.hidden == view.start == 320 - mounted

        first_shown = view.children[1]  # the oldest mounted entry, just below the marker
        offset = first_shown.virtual_region.y
        view.scroll_home(animate=False)  # at the top of the window the page before it comes in...
        for _ in range(3):
            await pilot.pause()
        mounted += TranscriptView.PAGE
        assert view.mounted_entries() == mounted and view.start == 320 - mounted
        assert first_shown.virtual_region.y - view.scroll_y == offset  # ... and the view stays put

        for number in range(10):  # reading further up: nothing is trimmed
            handle.note(f"more {number}")
            await pilot.pause()
        assert view.mounted_entries() == mounted + 10

        marker.focus()  # scrolls to the top, which brings in a page of its own
        for _ in range(3):
            await pilot.pause()
        before = view.mounted_entries()
        await pilot.press("enter")
        assert view.mounted_entries() == before + TranscriptView.PAGE
        assert isinstance(handle.transcript.entries[view.start], (UserEntry, AssistantEntry))
        assert len(view.children) == view.mounted_entries() + 1


async def test_page_keys_scroll_the_transcript_and_its_scrollbar_shows_while_reading(tmp_path):
    warm_up_core()
    settings = SessionSettings(cwd=Path(tmp_path), model="openai/any", interactive=True)
    app = KeelApp(settings, history=many_messages(60))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.screen.query_one(TranscriptView)
        assert app.focused is app.screen.query_one("#prompt")
        assert view.is_vertical_scroll_end and not view.has_class("-reading")
        assert view.scrollbar_size_vertical == 0  # following the end: no scrollbar
        width = view.scrollable_content_region.width
        await pilot.press("pageup")
        await pilot.pause()
        assert view.scroll_y < view.max_scroll_y and view.has_class("-reading")
        assert view.scrollbar_size_vertical == 1
        assert view.scrollable_content_region.width == width  # nothing re-wraps
        handle = app.pool.handles[0]
        handle.note("arrives while reading")
        await pilot.pause()
        assert view.has_class("-reading"), "an append does not pull the reader down"
        await pilot.press("pagedown", "pagedown")
        await pilot.pause()
        assert view.is_vertical_scroll_end and not view.has_class("-reading")
        assert view.scrollbar_size_vertical == 0


async def test_without_the_local_extra_the_tui_opens_says_why_and_model_sets_one(
    tmp_path, monkeypatch
):
    """Nothing configured and the embedded model cannot run (llama_cpp unimportable): the TUI still opens."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    shadow = (
        tmp_path / "shadow" / "llama_cpp"
    )  # the model worker finds this llama_cpp first, and it fails
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named llama_cpp')\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow.parent))
    settings = initial_settings(KeelConfig(), tmp_path, [])
    assert settings.model == default_model().model  # described, not loaded
    app = KeelApp(settings, KeelConfig())
    async with app.run_test(size=(100, 30)) as pilot:
        handle = app.pool.handles[0]
        await wait_until(pilot, lambda: not handle.stats.model, "the embedded model to be dropped")
        said = handle.transcript.entries[-1].text
        assert "llama-cpp-python is not installed" in said and "/model NAME" in said
        assert app.pool.model == ""
        prompt = app.screen.query_one("#prompt")
        prompt.value = "fix it"
        await pilot.press("enter")
        assert "no model is configured" in handle.transcript.entries[-1].text
        assert not handle.started
        prompt.value = "/model openai/gpt-4o-mini"
        await pilot.press("enter")
        assert handle.settings.model == handle.stats.model == "openai/gpt-4o-mini"
        assert handle.settings.cwd == tmp_path


FIRST_PAINT_PROBE = """
import sys
from pathlib import Path
from keel.agent.core.config import resolve_config
from keel.tui.app import KeelApp, initial_settings

cwd = Path.cwd()
config = resolve_config(cwd, {})

class Probe(KeelApp):
    def _start_warm_up(self):  # called once the main screen has painted
        loaded = [name for name in ("litellm", "llama_cpp", "keel.agent.core.session") if name in sys.modules]
        print(self.pool.handles[0].stats.model, *loaded)
        self.exit()

Probe(initial_settings(config, cwd, []), config).run(headless=True, size=(100, 30))
"""


def test_with_nothing_configured_the_tui_paints_before_loading_any_model(tmp_path):
    """The embedded model is described for the first paint; llama.cpp and litellm load after it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEEL_")}
    env.update(KEEL_HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    shown = subprocess.run(
        [sys.executable, "-c", FIRST_PAINT_PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert shown.stdout.split() == [default_model().model], shown.stderr


def test_a_move_to_the_small_profile_is_shown():
    transcript = new_transcript()
    transcript.apply(ProfileChanged(reason="2 of the model's first 2 replies had to be corrected"))
    notice = transcript.entries[-1]
    assert isinstance(notice, NoticeEntry) and "small-model profile" in notice.text


def test_status_lines_kept_for_the_model_are_not_shown_and_keels_other_messages_are():
    transcript = new_transcript()
    transcript.apply(UserMessage(text="fix it"))
    transcript.apply(
        UserMessage(text="[keel status] Tokens used…", origin="keel", purpose="status")
    )
    transcript.apply(UserMessage(text="Checks failed.", origin="keel", purpose="verification"))
    assert [entry.text for entry in transcript.entries] == ["fix it", "Checks failed."]
