"""The TUI driven by Pilot against the scripted server: answers, tool panels, approvals, interrupts, many agents."""

from __future__ import annotations

import pytest
from tui_support import CALC, send, settings_for, type_text, wait_until

from keel.agent.core.store import read_events
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.tui.app import KeelApp
from keel.tui.screens.approval_modal import ApprovalModal
from keel.tui.screens.help_screen import HelpScreen
from keel.tui.screens.new_session_dialog import NewSessionDialog
from keel.tui.transcript import AssistantEntry, NoticeEntry, ToolEntry, UserEntry
from keel.tui.widgets.assistant_block import AssistantBlock
from keel.tui.widgets.session_list import SessionList
from keel.tui.widgets.status_bar import StatusBar
from keel.tui.widgets.tool_panel import ToolPanel
from keel.tui.widgets.user_block import UserBlock

pytestmark = pytest.mark.usefixtures("core_loaded")


def run_command_reply(command: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="run_command", arguments={"command": command})])


def tool_results(server) -> list[str]:
    """What the model was told about its tool calls, in the last request it received."""
    return [m["content"] for m in server.requests[-1].messages if m["role"] == "tool"]


async def test_prompt_shows_the_answer_and_a_tool_panel(scripted_server, calc_repo):
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})]),
            Reply(text="`add` subtracts: it returns **a - b**.", chunk_delay=0.01),
        ]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
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


async def test_approving_a_command_runs_it(scripted_server, calc_repo):
    server = scripted_server([run_command_reply("echo approved-output"), Reply(text="It printed.")])
    app = KeelApp(settings_for(calc_repo, server.url))
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


async def test_denying_a_command_does_not_run_it(scripted_server, calc_repo):
    server = scripted_server([run_command_reply("touch marker"), Reply(text="Understood.")])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "make a marker")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal), "the approval modal")
        await pilot.press("d")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        [panel] = app.screen.query(ToolPanel)
        assert panel.has_class("-denied")
    assert not (calc_repo / "marker").exists()
    assert tool_results(server)[0].startswith("Denied")


async def test_allow_for_the_session_stops_asking(scripted_server, calc_repo):
    server = scripted_server(
        [
            run_command_reply("echo one"),
            run_command_reply("echo two"),
            Reply(text="Both ran."),
        ]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "run two commands")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal), "the approval modal")
        await pilot.press("s")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        tools = [e for e in handle.transcript.entries if isinstance(e, ToolEntry)]
        assert [t.state for t in tools] == ["ok", "ok"]
        assert "two" in tools[1].output


async def test_escape_interrupts_a_slow_stream(scripted_server, calc_repo):
    words = " ".join(f"word{i}" for i in range(300))
    server = scripted_server([Reply(text=words, chunk_delay=0.05), Reply(text="Resumed fine.")])
    app = KeelApp(settings_for(calc_repo, server.url))
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
    chunks = (
        40 if task == "task one" else 5
    )  # of 40 characters each, 0.15 s apart: 6 s against 0.75 s
    return Reply(
        text=f"Answer for {task}: ".ljust(40) + "lorem ipsum dolor sit amet consectetur. " * chunks,
        chunk_delay=0.15,
    )


def task_span(handle) -> tuple[float, float]:
    """When the handle's task started and finished, from its session log."""
    events = read_events(handle.session.log.path)
    started = next(e.ts for e in events if e.type == "user.message")
    finished = next(e.ts for e in events if e.type == "session.finished")
    return started, finished


async def test_two_sessions_run_at_once_and_both_finish(scripted_server, calc_repo):
    server = scripted_server(answer_by_prompt, text_chunk_chars=40)
    app = KeelApp(settings_for(calc_repo, server.url))
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

        await wait_until(
            pilot,
            lambda: first.stats.status == second.stats.status == "done",
            "both agents to finish",
        )
        (first_start, first_end), (second_start, _) = task_span(first), task_span(second)
        assert first_start < second_start < first_end, "the two agents never ran at the same time"
        for handle, task in ((first, "task one"), (second, "task two")):
            answers = [e.text for e in handle.transcript.entries if isinstance(e, AssistantEntry)]
            assert answers and answers[0].startswith(f"Answer for {task}")

        # switching back shows the first agent's transcript, complete although it finished off screen
        await pilot.press("ctrl+pageup")
        await pilot.pause()
        assert app.screen.selected is first
        shown = [block.text for block in app.screen.query(AssistantBlock)]
        assert shown and shown[0].startswith("Answer for task one")


async def test_slash_commands(scripted_server, calc_repo):
    server = scripted_server([Reply(text="hello"), Reply(text="A summary of the work so far.")])
    app = KeelApp(settings_for(calc_repo, server.url))
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


async def test_slash_commands_complete_with_the_right_arrow(scripted_server, calc_repo):
    """The suggestion comes from a worker: → takes it once it is there."""
    app = KeelApp(settings_for(calc_repo, scripted_server([]).url))
    async with app.run_test(size=(120, 40)) as pilot:
        box = app.screen.query_one("#prompt")
        await type_text(pilot, "/he")

        async def completed() -> bool:
            await pilot.press("right")
            return box.value == "/help"

        for _ in range(40):
            if await completed():
                break
            await pilot.pause(0.05)
        assert box.value == "/help"
        await type_text(pilot, " x")
        await pilot.press("ctrl+u")  # typed text is never completed unless it starts with /
        await type_text(pilot, "he")
        await pilot.pause(0.2)
        await pilot.press("right")
        assert box.value == "he"


async def test_prompt_history_walks_back_and_forth(scripted_server, calc_repo):
    server = scripted_server([Reply(text="one"), Reply(text="two")])
    app = KeelApp(settings_for(calc_repo, server.url))
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


async def test_a_background_agent_waits_for_approval_until_shown(scripted_server, calc_repo):
    server = scripted_server([run_command_reply("echo from-agent-one"), Reply(text="Ran it.")])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        first = app.pool.handles[0]
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSessionDialog), "the dialog")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.pool.handles) == 2, "the second agent")
        assert app.screen.selected is app.pool.handles[1]

        first.prompt("run something")  # agent 1 works in the background while agent 2 is shown
        app.start(first)
        await wait_until(pilot, lambda: first.stats.status == "approval", "agent 1 to ask")
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalModal)
        rows = app.screen.query_one(SessionList).rows()
        assert rows[0].has_class("-approval") and "needs approval" in str(
            rows[0].children[0].render()
        )

        await pilot.press("ctrl+pageup")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal), "the approval modal")
        await pilot.press("a")
        await wait_until(pilot, lambda: first.stats.status == "done", "agent 1 to finish")
    assert "from-agent-one" in tool_results(server)[0]


async def test_resumed_session_shows_its_history_and_continues(scripted_server, calc_repo):
    server = scripted_server([Reply(text="first answer"), Reply(text="second answer")])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "first question")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the first task")
        log = handle.session.log.path

    history = read_events(log)
    resumed = KeelApp(settings_for(calc_repo, server.url), resume=log, history=history)
    async with resumed.run_test(size=(120, 40)) as pilot:
        handle = resumed.pool.handles[0]
        assert [block.text for block in resumed.screen.query(AssistantBlock)] == ["first answer"]
        await send(pilot, "second question")
        await wait_until(
            pilot, lambda: handle.transcript.entries[-2] == AssistantEntry("second answer"), "it"
        )
        assert handle.session.id == log.stem
    said = [m["content"] for m in server.requests[-1].messages if m["role"] == "user"]
    assert any("first question" in str(text) for text in said)


async def test_undo_puts_the_workspace_back_before_the_last_turn(scripted_server, calc_repo):
    from keel.agent.core.git.checkpoints import CheckpointStore

    edit = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="edit_file", arguments=edit)]),
            Reply(text="Fixed."),
        ]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        CheckpointStore(calc_repo).snapshot(
            "fix add", session_id="s1"
        )  # what the core takes before a turn
        await send(pilot, "fix add")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        assert "a + b" in (calc_repo / "calc.py").read_text()
        await send(pilot, "/undo")
        await wait_until(
            pilot, lambda: "restored" in handle.transcript.entries[-1].text, "the undo"
        )
        assert (calc_repo / "calc.py").read_text() == CALC["calc.py"]
        said = handle.transcript.entries[-1].text
        assert "calc.py" in said and "restored 1 file " in said

        back = said.split("to take it back: /undo ")[1].split()[0]  # the undo undone by its id
        await send(pilot, f"/undo {back}")
        await wait_until(
            pilot, lambda: f"checkpoint {back}" in handle.transcript.entries[-1].text, "the redo"
        )
        assert "a + b" in (calc_repo / "calc.py").read_text()
        await send(pilot, "/undo nosuchid")
        await wait_until(pilot, lambda: "undo failed" in handle.transcript.entries[-1].text, "it")
        assert "a + b" in (calc_repo / "calc.py").read_text()


@pytest.mark.parametrize("command", ["/quit", "/exit"])
async def test_quit_and_exit_commands_close_the_app(scripted_server, calc_repo, command):
    app = KeelApp(settings_for(calc_repo, scripted_server([]).url))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, command)
        await wait_until(pilot, lambda: not app.is_running, "the app to quit")
