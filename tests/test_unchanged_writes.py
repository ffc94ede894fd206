"""A write_file of the content the file already has changes nothing, and says so everywhere: in the tool
result, as tool.finished status "unchanged" (still ok), and in the TUI's row, which is not a green check."""

from __future__ import annotations

from pathlib import Path

import pytest
from keel_cli import git_repo, run_streamed
from tui_support import CALC, send, settings_for, wait_until

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall
from keel.tools.base import ToolContext
from keel.tools.read_file import ReadFileTool
from keel.tools.registry import ToolRegistry
from keel.tools.write_file import WriteFileTool

REGISTRY = ToolRegistry([ReadFileTool(), WriteFileTool()])


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


async def test_the_tool_result_says_nothing_changed(ctx: ToolContext) -> None:
    path = ctx.root / "a.txt"
    path.write_text("same\n")
    tool, args = REGISTRY.validate("read_file", {"path": "a.txt"})
    assert (await REGISTRY.run(tool, args, ctx)).ok
    tool, args = REGISTRY.validate("write_file", {"path": "a.txt", "content": "same\n"})
    result = await REGISTRY.run(tool, args, ctx)
    assert result.ok and result.unchanged and not result.diff
    assert "nothing changed" in result.output
    tool, args = REGISTRY.validate("write_file", {"path": "a.txt", "content": "other\n"})
    result = await REGISTRY.run(tool, args, ctx)
    assert result.ok and not result.unchanged and result.diff


def test_tool_finished_says_unchanged_and_still_ok(scripted_server, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"notes.txt": "one\ntwo\n"})
    server = scripted_server(
        [
            call("read_file", path="notes.txt"),
            call("write_file", path="notes.txt", content="one\ntwo\n"),
            call("write_file", path="notes.txt", content="one\n2\n"),
            Reply(text="done"),
        ]
    )
    result = run_streamed(server.url, "rewrite notes", cwd=repo, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr[-2000:]
    finished = [e for e in result.events if e["type"] == "tool.finished"]
    assert [(e["name"], e["status"], e["ok"]) for e in finished] == [
        ("read_file", "ok", True),
        ("write_file", "unchanged", True),
        ("write_file", "ok", True),
    ]
    assert "nothing changed" in finished[1]["output"]


@pytest.mark.usefixtures("core_loaded")
async def test_the_tui_row_of_an_unchanged_write_is_not_a_green_check(
    scripted_server, calc_repo: Path
) -> None:
    from keel.tui.app import KeelApp
    from keel.tui.widgets.tool_panel import ToolPanel

    server = scripted_server(
        [
            call("read_file", path="calc.py"),
            call("write_file", path="calc.py", content=CALC["calc.py"]),
            Reply(text="It was already right."),
        ]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "rewrite calc")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        await pilot.pause()
        read, write = app.screen.query(ToolPanel)
        assert read.has_class("-ok") and str(read.title).startswith("✓")
        assert write.has_class("-unchanged") and not write.has_class("-ok")
        assert not str(write.title).startswith("✓") and "nothing changed" in str(write.title)
