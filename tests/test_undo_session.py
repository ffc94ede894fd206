"""/undo is keel's own act: the session records it (undo.applied, folded, so it survives a resume), its
model's next turn is told which files it restored, and the model's next write of one is not refused as
a change made behind its back."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import CALC, send, settings_for, wait_until

from keel.agent.core.store import read_events
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

pytestmark = pytest.mark.usefixtures("core_loaded")

FIX = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


def said_to_model(server) -> str:
    """Every message of the last request the model received, as one text."""
    return "\n".join(str(m.get("content")) for m in server.requests[-1].messages)


async def test_after_undo_the_model_is_told_and_its_next_edit_is_not_refused(
    scripted_server, calc_repo: Path
) -> None:
    from keel.agent.core.git.checkpoints import CheckpointStore
    from keel.agent.core.session import Session
    from keel.tui.app import KeelApp

    server = scripted_server(
        [
            call("read_file", path="calc.py"),
            call("edit_file", **FIX),
            Reply(text="Fixed."),
            call("edit_file", **FIX),  # the same fix again, after the person's /undo
            Reply(text="Fixed again."),
        ]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        CheckpointStore(calc_repo).snapshot("fix add", session_id="s1")
        await send(pilot, "fix add")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        await send(pilot, "/undo")
        await wait_until(pilot, lambda: "restored" in handle.transcript.entries[-1].text, "undo")
        assert (calc_repo / "calc.py").read_text() == CALC["calc.py"]

        await send(pilot, "do it again")
        await wait_until(pilot, lambda: len(server.requests) == 5, "the last request")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        results = [m["content"] for m in server.requests[-1].messages if m["role"] == "tool"]
        assert results[-1].startswith("Edited calc.py"), results[-1]
        told = said_to_model(server)
        assert "/undo" in told and "calc.py: reverted to its earlier content" in told
        assert "a + b" in (calc_repo / "calc.py").read_text()
        log = handle.session.log.path

    undone = [event for event in read_events(log) if event.type == "undo.applied"]
    assert [[(f.action, f.path) for f in event.files] for event in undone] == [[("M", "calc.py")]]
    resumed = Session(settings_for(calc_repo, server.url), resume=log)
    notes = [m.content for m in resumed.state.history if "/undo" in str(m.content)]
    assert len(notes) == 1 and "calc.py" in str(notes[0])
    await resumed.close()


async def test_undo_with_nothing_to_undo_tells_the_model_nothing(
    scripted_server, calc_repo: Path
) -> None:
    from keel.tui.app import KeelApp

    server = scripted_server([Reply(text="Hello."), Reply(text="Still here.")])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "hi")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        await send(pilot, "/undo")
        await wait_until(
            pilot, lambda: "nothing to undo" in handle.transcript.entries[-1].text, "the undo"
        )
        await send(pilot, "anything?")
        await wait_until(pilot, lambda: len(server.requests) == 2, "the second request")
        assert "/undo" not in said_to_model(server)


async def test_keel_undo_is_told_to_the_session_when_it_resumes(
    scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keel_cli import git_repo, run_keel

    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings

    repo = git_repo(tmp_path / "repo", {"app.py": "print('v1')\n"})
    home = tmp_path / "home"
    edit = {"path": "app.py", "old_string": "v1", "new_string": "v2"}
    server = scripted_server([call("edit_file", **edit), Reply(text="Changed it.")])
    args = ("--model", "openai/any", "--api-base", server.url)
    assert run_keel("run", *args, "change it", cwd=repo, home=home).returncode == 0
    undone = run_keel("undo", "--yes", cwd=repo, home=home)
    assert undone.returncode == 0, undone.stderr
    assert (repo / "app.py").read_text() == "print('v1')\n"

    monkeypatch.setenv("KEEL_HOME", str(home))
    [log] = (home / "sessions").glob("*.jsonl")
    assert f"Session {log.stem} will tell its model" in undone.stdout
    assert [event.type for event in read_events(log)][-1] == "undo.applied"
    settings = SessionSettings(cwd=repo, model="openai/any", api_base=server.url)
    resumed = Session(settings, resume=log)
    last = str(resumed.state.history[-1].content)
    await resumed.close()
    assert "/undo" in last and "app.py: reverted to its earlier content" in last
