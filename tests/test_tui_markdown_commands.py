"""The TUI and Markdown commands (issue 31, point 5): /help lists them, → completes them, Enter sends the
prompt they stand for; a hook that blocks shows as a note."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from tui_support import send, settings_for, type_text, wait_until

from keel.agent.core.protocol import HookRan
from keel.agent.harness.testing.scripted_server import Reply
from keel.agent.harness.testing.scripted_wire import content_text
from keel.tui.app import KeelApp
from keel.tui.screens.help_screen import HelpScreen, help_table
from keel.tui.transcript import SessionStats, Transcript

pytestmark = pytest.mark.usefixtures("core_loaded")

REVIEW = "---\ndescription: Review a file for bugs\nargument-hint: [file]\n---\nReview $ARGUMENTS for bugs.\n"


def said_by_user(request) -> str:
    """Every user message of a request (the prompt, and keel's status lines after it), as one text."""
    return "\n".join(
        content_text(m.get("content")) for m in request.messages if m.get("role") == "user"
    )


async def test_a_markdown_command_is_listed_completed_and_sent_expanded(
    scripted_server, calc_repo, monkeypatch, tmp_path
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (calc_repo / ".claude" / "commands").mkdir(parents=True)
    (calc_repo / ".claude" / "commands" / "review.md").write_text(REVIEW)
    rows = [str(cell) for column in help_table(calc_repo).columns for cell in column._cells]
    assert "/review [file]" in rows and "Review a file for bugs" in rows
    server = scripted_server([Reply(text="No bugs.")])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "/help")
        assert isinstance(app.screen, HelpScreen) and app.screen.root == calc_repo
        await pilot.press("escape")
        box = app.screen.query_one("#prompt")
        await type_text(pilot, "/rev")
        for _ in range(40):
            await pilot.press("right")
            if box.value == "/review":
                break
            await pilot.pause(0.05)
        assert box.value == "/review"
        await send(pilot, " calc.py")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
    assert "Review calc.py for bugs." in said_by_user(server.requests[0])


def test_a_blocking_hook_is_a_note_in_the_transcript():
    transcript = Transcript(SessionStats(model="openai/any"))
    reason = "Deleting files is not allowed here"
    transcript.apply(
        HookRan(hook_event="PreToolUse", command="x", exit_code=2, blocked=True, reason=reason)
    )
    transcript.apply(HookRan(hook_event="PostToolUse", command="y", exit_code=0))
    assert [entry.text for entry in transcript.entries] == [f"PreToolUse hook blocked it: {reason}"]


class HelpApp(App[None]):
    CSS_PATH = KeelApp.CSS_PATH

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def on_mount(self) -> None:
        self.push_screen(HelpScreen(self.root))


def test_help_lists_the_markdown_commands_and_skills(snap_compare, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = tmp_path / "repo" / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(REVIEW)
    (folder / "changelog.md").write_text("Write the changelog entry for the last commit.\n")
    skill = tmp_path / "repo" / ".keel" / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: release-notes\ndescription: Write release notes.\n---\nSteps.\n")
    assert snap_compare(HelpApp(tmp_path / "repo"), terminal_size=(120, 40))
