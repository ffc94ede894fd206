"""Many agents on one prompt (/fan, the dialog's copies), each in its own worktree, and the side-by-side view."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

import pytest
from tui_support import fixed_history, send, settings_for, wait_until

from keel.agent.core.settings import SessionSettings
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.tui.app import KeelApp
from keel.tui.commands import command_help
from keel.tui.screens.main_screen import MainScreen
from keel.tui.screens.new_session_dialog import NewSessionDialog
from keel.tui.screens.side_by_side import SideBySideScreen
from keel.tui.transcript import NoticeEntry
from keel.tui.widgets.assistant_block import AssistantBlock
from keel.tui.widgets.session_list import SessionList
from keel.tui.widgets.side_column import SideColumn

pytestmark = [pytest.mark.usefixtures("core_loaded")]

NOTES = {"path": "notes.txt", "content": "from a worktree\n"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def last_note(handle) -> str:
    return next(e.text for e in reversed(handle.transcript.entries) if isinstance(e, NoticeEntry))


def answer_by_branch(gate: threading.Event):
    """Each agent writes notes.txt, then answers naming its branch; nothing is answered before `gate`."""

    def respond(request: ChatRequest) -> Reply:
        gate.wait(timeout=30)
        system = str(request.messages[0]["content"])
        branch = re.search(r"git branch (\S+)\)", system)
        if not any(message["role"] == "tool" for message in request.messages):
            return Reply(tool_calls=[ScriptedToolCall(name="write_file", arguments=NOTES)])
        return Reply(
            text=f"Answer from {branch.group(1) if branch else 'nowhere'}", chunk_delay=0.01
        )

    return respond


def column_answers(column: SideColumn) -> list[str]:
    return [block.text for block in column.query(AssistantBlock)]


async def test_fan_runs_agents_in_worktrees_side_by_side(scripted_server, calc_repo):
    gate = threading.Event()
    server = scripted_server(answer_by_branch(gate))
    head = git(calc_repo, "rev-parse", "HEAD")
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "/fan 2 write the notes")
        await wait_until(pilot, lambda: isinstance(app.screen, SideBySideScreen), "the side view")
        first, second = fanned = app.pool.handles[1:]
        assert [h.name for h in fanned] == ["write-the-notes-1", "write-the-notes-2"]
        assert [h.branch for h in fanned] == ["keel/write-the-notes-1", "keel/write-the-notes-2"]
        columns = list(app.screen.query(SideColumn))
        assert [column.handle for column in columns] == fanned
        assert not any(column_answers(column) for column in columns)  # nothing answered yet

        gate.set()  # the answers now arrive while the columns are on screen
        await wait_until(
            pilot, lambda: first.stats.status == second.stats.status == "done", "both agents"
        )
        await pilot.pause(0.5)  # streamed text is repainted a few times a second
        for column in columns:
            assert column_answers(column) == [f"Answer from {column.handle.branch}"]
            header = str(column.header.render())
            assert "done" in header and "tokens" in header and column.handle.stats.used > 0

        # each agent wrote in its own worktree, on its own branch; the person's checkout is untouched
        worktrees = git(calc_repo, "worktree", "list", "--porcelain")
        for handle in fanned:
            assert f"worktree {handle.settings.cwd}" in worktrees
            assert f"branch refs/heads/{handle.branch}" in worktrees
            assert (handle.settings.cwd / "notes.txt").read_text() == NOTES["content"]
        assert (
            git(calc_repo, "rev-parse", "HEAD") == head
            and git(calc_repo, "status", "--porcelain") == ""
        )
        assert git(calc_repo, "branch", "--show-current") == "main"

        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen) and app.screen.selected is app.pool.handles[0]
        assert "started 2 agents" in last_note(app.pool.handles[0])

        # F2 brings the group back; → and Enter open the second column's session in the main view
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SideBySideScreen), "F2")
        assert [column.handle for column in app.screen.query(SideColumn)] == fanned
        await pilot.press("right", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), "the main view")
        assert app.screen.selected is second
        shown = [block.text for block in app.screen.query(AssistantBlock)]
        assert shown == [f"Answer from {second.branch}"]

        # /side picks sessions by number; a click on a column's header opens that session
        await send(pilot, "/side 1 2")
        await wait_until(pilot, lambda: isinstance(app.screen, SideBySideScreen), "/side 1 2")
        headers = [column.header for column in app.screen.query(SideColumn)]
        assert [header.handle for header in headers] == app.pool.handles[:2]
        await pilot.click(headers[1])
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), "the click")
        assert app.screen.selected is first
        await send(pilot, "/side 7")
        assert "session numbers from 1 to 3" in last_note(first)


async def test_bad_fan_commands_start_nothing(scripted_server, calc_repo):
    server = scripted_server([])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        for command, says in [
            ("/fan 0 x", "from 1 to 16 agents"),
            ("/fan 17 x", "from 1 to 16 agents"),
            ("/fan two x", "needs a number of agents"),
            ("/fan 2", "needs a prompt"),
            ("/fan", "needs a number of agents and a prompt"),
        ]:
            await send(pilot, command)
            assert says in last_note(handle), command
            assert handle.transcript.entries[-1].level == "error"
        assert len(app.pool.handles) == 1 and isinstance(app.screen, MainScreen)
    assert len(git(calc_repo, "worktree", "list").splitlines()) == 1
    assert git(calc_repo, "branch", "--list", "keel/*") == ""
    assert not server.requests
    assert "/fan N PROMPT" in [item.usage for item in command_help()]


async def test_fan_outside_a_git_repository_says_worktrees_need_one(scripted_server, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    server = scripted_server([])
    app = KeelApp(settings_for(plain, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "/fan 2 fix it")
        await wait_until(pilot, lambda: "git repository" in last_note(handle), "the message")
        assert "Nothing was started" in last_note(handle)
        assert len(app.pool.handles) == 1 and isinstance(app.screen, MainScreen)
    assert not server.requests


async def test_the_new_agent_dialog_starts_copies(scripted_server, calc_repo):
    server = scripted_server([])  # every request gets the fallback answer "done"
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSessionDialog), "the dialog")
        dialog = app.screen
        dialog.query_one("#new-copies").value = "3"
        await pilot.press("enter")  # no task: copies need one
        assert app.screen is dialog and "need a first task" in str(
            dialog.query_one("#new-error").render()
        )
        dialog.query_one("#new-name").value = "trio"
        dialog.query_one("#new-task").value = "say done"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.pool.handles) == 4, "three agents")
        trio = app.pool.handles[1:]
        assert [h.name for h in trio] == ["trio-1", "trio-2", "trio-3"]
        worktrees = {h.settings.cwd for h in trio}
        assert len(worktrees) == 3 and calc_repo not in worktrees
        await wait_until(
            pilot, lambda: all(h.stats.status == "done" for h in trio), "the three agents"
        )
        await wait_until(pilot, lambda: isinstance(app.screen, SideBySideScreen), "the side view")
        assert len(app.screen.query(SideColumn)) == 3
    assert git(calc_repo, "status", "--porcelain") == ""


def test_side_by_side_snapshot(snap_compare):
    """Two finished sessions from fixed histories, one on its own branch, side by side (F2)."""
    settings = SessionSettings(
        cwd=Path("/work/demo"), model="openai/any", interactive=True, budget=50_000
    )
    app = KeelApp(settings, history=fixed_history())
    app.pool.add(settings, name="fix-add-2", history=fixed_history("20250101-120000-fedcba"))
    app.pool.handles[1].branch = "keel/fix-add-2"
    assert snap_compare(app, terminal_size=(120, 36), press=["f2"])


async def test_a_new_agent_in_its_own_worktree_leaves_the_checkout_alone(
    scripted_server, calc_repo
):
    write = {"path": "notes.txt", "content": "from the worktree\n"}
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="write_file", arguments=write)]),
            Reply(text="Wrote notes.txt."),
        ]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSessionDialog), "the dialog")
        app.screen.query_one("#new-task").value = "write notes"
        app.screen.query_one("#new-worktree").focus()
        await pilot.press("space")  # Space ticks the box, Enter starts the agent from it
        assert app.screen.query_one("#new-worktree").value is True
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.pool.handles) == 2, "the worktree agent")
        agent = app.pool.handles[1]
        await wait_until(
            pilot, lambda: agent.stats.status == "done", "the worktree agent to finish"
        )
        worktree = agent.settings.cwd
        assert (
            worktree != calc_repo and (worktree / "notes.txt").read_text() == "from the worktree\n"
        )
        assert not (calc_repo / "notes.txt").exists()
        assert agent.branch.startswith("keel/")
        rows = app.screen.query_one(SessionList).rows()
        assert agent.branch in str(rows[1].children[0].render())

        await pilot.click(rows[0])  # the mouse picks a session too
        await wait_until(pilot, lambda: app.screen.selected is app.pool.handles[0], "the click")
