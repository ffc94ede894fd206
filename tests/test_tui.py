"""The TUI driven by Pilot against the scripted server: answers, tool panels, approvals, interrupts, many agents."""

from __future__ import annotations

import pytest
from keel_cli import git_repo
from scripted_server import ChatRequest, Reply, ScriptedToolCall
from tui_support import settings_for, type_text, wait_until

from tui.app import KeelApp
from tui.screens.approval_modal import ApprovalModal
from tui.screens.help_screen import HelpScreen
from tui.screens.new_session_dialog import NewSessionDialog
from tui.transcript import AssistantEntry, NoticeEntry, ToolEntry, UserEntry
from tui.warmup import warm_up_core
from tui.widgets.assistant_block import AssistantBlock
from tui.widgets.status_bar import StatusBar
from tui.widgets.tool_panel import ToolPanel
from tui.widgets.user_block import UserBlock

CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}


@pytest.fixture(scope="module", autouse=True)
def core_loaded():
    """Load the core and litellm before any app starts, so Pilot's timeouts never race that import."""
    warm_up_core()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", CALC)


def run_command_reply(command: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="run_command", arguments={"command": command})])


async def send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


def tool_results(server) -> list[str]:
    """What the model was told about its tool calls, in the last request it received."""
    return [m["content"] for m in server.requests[-1].messages if m["role"] == "tool"]


async def test_prompt_shows_the_answer_and_a_tool_panel(scripted_server, repo):
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})]),
            Reply(text="`add` subtracts: it returns **a - b**.", chunk_delay=0.01),
        ]
    )
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "why is add wrong")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        await pilot.pause()

        prompts = [str(block.render()) for block in app.screen.query(UserBlock)]
        assert any("why is add wrong" in text for text in prompts)
        [panel] = app.screen.query(ToolPanel)
        assert (
            panel.has_class("-ok")
            and "read_file" in str(panel.title)
            and "calc.py" in str(panel.title)
        )
        answers = [block.text for block in app.screen.query(AssistantBlock)]
        assert answers == ["`add` subtracts: it returns **a - b**."]
        status = str(app.screen.query_one(StatusBar).render())
        assert "openai/any" in status and "done" in status and "context" in status
    assert "return a - b" in tool_results(server)[0]


async def test_approving_a_command_runs_it(scripted_server, repo):
    server = scripted_server([run_command_reply("echo approved-output"), Reply(text="It printed.")])
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "run echo")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal), "the approval modal")
        assert handle.stats.status == "approval"
        assert "echo approved-output" in str(app.screen.query_one("#approval-arguments").render())
        await pilot.press("a")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        [tool] = [e for e in handle.transcript.entries if isinstance(e, ToolEntry)]
        assert tool.state == "ok" and "approved-output" in tool.output
    assert "approved-output" in tool_results(server)[0]


async def test_denying_a_command_does_not_run_it(scripted_server, repo):
    server = scripted_server([run_command_reply("touch marker"), Reply(text="Understood.")])
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "make a marker")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal), "the approval modal")
        await pilot.press("d")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        [panel] = app.screen.query(ToolPanel)
        assert panel.has_class("-denied")
    assert not (repo / "marker").exists()
    assert tool_results(server)[0].startswith("Denied")


async def test_allow_for_the_session_stops_asking(scripted_server, repo):
    server = scripted_server(
        [
            run_command_reply("echo one"),
            run_command_reply("echo two"),
            Reply(text="Both ran."),
        ]
    )
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "run two commands")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal), "the approval modal")
        await pilot.press("s")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        tools = [e for e in handle.transcript.entries if isinstance(e, ToolEntry)]
        assert [t.state for t in tools] == ["ok", "ok"]
        assert "two" in tools[1].output


async def test_escape_interrupts_a_slow_stream(scripted_server, repo):
    words = " ".join(f"word{i}" for i in range(300))
    server = scripted_server([Reply(text=words, chunk_delay=0.05), Reply(text="Resumed fine.")])
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "write a lot")

        def streaming() -> bool:
            return any(
                isinstance(e, AssistantEntry) and e.streaming and len(e.text) > 20
                for e in handle.transcript.entries
            )

        await wait_until(pilot, streaming, "the answer to start streaming")
        assert app.screen.query(AssistantBlock)
        await pilot.press("escape")
        await wait_until(pilot, lambda: handle.stats.status == "interrupted", "the interrupt")
        [partial] = [e for e in handle.transcript.entries if isinstance(e, AssistantEntry)]
        assert not partial.streaming and len(partial.text) < len(words)
        assert any(
            isinstance(e, NoticeEntry) and e.text.startswith("interrupted")
            for e in handle.transcript.entries
        )

        await send(pilot, "go on")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the next task")
        assert handle.transcript.entries[-2] == AssistantEntry("Resumed fine.")


def answer_by_prompt(request: ChatRequest) -> Reply:
    """Each agent gets an answer naming its own task; the first streams for seconds, so the second overlaps it."""
    said = " ".join(str(m["content"]) for m in request.messages if m["role"] == "user")
    task = "task two" if "task two" in said else "task one"
    length = 150 if task == "task one" else 20
    return Reply(text=f"Answer for {task}: " + "lorem ipsum " * length, chunk_delay=0.03)


async def test_two_sessions_run_at_once_and_both_finish(scripted_server, repo):
    server = scripted_server(answer_by_prompt)
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        first = app.pool.handles[0]
        await send(pilot, "task one")
        await wait_until(pilot, lambda: first.session is not None, "the first session")

        await pilot.press("ctrl+n")
        await wait_until(
            pilot, lambda: isinstance(app.screen, NewSessionDialog), "the new-agent dialog"
        )
        # filled in directly: Pilot waits for an idle CPU after each key, which a streaming agent delays
        app.screen.query_one("#new-task").value = "task two"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.pool.handles) == 2, "the second agent")
        second = app.pool.handles[1]
        assert app.screen.selected is second

        overlapped = False

        def both_done() -> bool:
            nonlocal overlapped
            overlapped |= first.busy and second.busy
            return first.stats.status == second.stats.status == "done"

        await wait_until(pilot, both_done, "both agents to finish")
        assert overlapped, "the two agents never ran at the same time"
        for handle, task in ((first, "task one"), (second, "task two")):
            answers = [e.text for e in handle.transcript.entries if isinstance(e, AssistantEntry)]
            assert answers and answers[0].startswith(f"Answer for {task}")

        # switching back shows the first agent's transcript, complete although it finished off screen
        await pilot.press("ctrl+pageup")
        await pilot.pause()
        assert app.screen.selected is first
        shown = [block.text for block in app.screen.query(AssistantBlock)]
        assert shown and shown[0].startswith("Answer for task one")


async def test_slash_commands(scripted_server, repo):
    server = scripted_server([Reply(text="hello"), Reply(text="A summary of the work so far.")])
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "/model openai/other")
        assert handle.settings.model == handle.stats.model == "openai/other"
        await send(pilot, "/model openai/any")
        await send(pilot, "/budget 50k")
        assert handle.stats.budget == 50_000
        await send(pilot, "/bogus")
        assert "unknown command /bogus" in handle.transcript.entries[-1].text
        await send(pilot, "/help")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")

        await send(pilot, "hi")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        assert handle.session is not None and handle.session.state.budget == 50_000
        await send(pilot, "/model openai/next")
        assert handle.stats.model == "openai/any" and app.pool.model == "openai/next"
        await send(pilot, "/compact")
        await wait_until(
            pilot,
            lambda: "context summarized" in handle.transcript.entries[-1].text,
            "the compaction notice",
        )


async def test_prompt_history_walks_back_and_forth(scripted_server, repo):
    server = scripted_server([Reply(text="one"), Reply(text="two")])
    app = KeelApp(settings_for(repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        for text in ("first prompt", "second prompt"):
            await send(pilot, text)
            await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        box = app.screen.query_one("#prompt")
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert box.value == "second prompt"
        await pilot.press("up", "up")
        assert box.value == "first prompt"
        await pilot.press("down", "down")
        assert box.value == "draft"
        users = [e.text for e in handle.transcript.entries if isinstance(e, UserEntry)]
        assert users == ["first prompt", "second prompt"]
