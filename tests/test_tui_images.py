"""Images in the TUI: a path typed or pasted into the prompt box is sent with the prompt as an image (to a model
that takes images; others get a note), and the transcript says which."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_images import data_url, image_parts, png
from tui_support import FIXED_TS, fixed_history, send, settings_for, wait_until

from keel.agent.core.protocol import ImageAttached
from keel.agent.harness.testing.scripted_server import Reply
from keel.tui.app import KeelApp
from keel.tui.image_paths import image_paths
from keel.tui.transcript import NoticeEntry
from keel.tui.widgets.prompt_input import PromptInput


def test_image_paths_finds_the_image_files_a_prompt_names(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png())
    (tmp_path / "my shot.JPG").write_bytes(b"\xff\xd8\xff")
    (tmp_path / "notes.txt").write_text("x")
    cwd = tmp_path
    assert image_paths("what is wrong in shot.png?", cwd) == [str(tmp_path / "shot.png")]
    assert image_paths(f"see '{tmp_path}/my shot.JPG' and shot.png", cwd) == [
        str(tmp_path / "my shot.JPG"),
        str(tmp_path / "shot.png"),
    ]
    pasted = f"file://{tmp_path}/my%20shot.JPG"  # what a terminal pastes for a dropped file
    assert image_paths(pasted, cwd) == [str(tmp_path / "my shot.JPG")]
    assert image_paths(f"{tmp_path}/my\\ shot.JPG", cwd) == [str(tmp_path / "my shot.JPG")]
    assert image_paths("don't read missing.png, notes.txt or shot.png twice: shot.png", cwd) == [
        str(tmp_path / "shot.png")
    ]


@pytest.mark.usefixtures("core_loaded")
async def test_an_image_path_in_the_prompt_reaches_a_vision_model(scripted_server, calc_repo):
    server = scripted_server([Reply(text="A red pixel.")])
    (calc_repo / "shot.png").write_bytes(png())
    app = KeelApp(settings_for(calc_repo, server.url, model="openai/gpt-4o"))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "what is in shot.png")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        notes = [e.text for e in handle.transcript.entries if isinstance(e, NoticeEntry)]
    assert any("image shot.png (image/png" in n and "sent with the prompt" in n for n in notes)
    assert image_parts(server.requests[0].messages) == [
        {"type": "image_url", "image_url": {"url": data_url(png())}}
    ]


@pytest.mark.usefixtures("core_loaded")
async def test_a_text_only_model_gets_a_note_and_the_person_a_warning(scripted_server, calc_repo):
    server = scripted_server([Reply(text="I cannot see images.")])
    (calc_repo / "shot.png").write_bytes(png())
    app = KeelApp(settings_for(calc_repo, server.url, model="openai/gpt-3.5-turbo"))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "what is in shot.png")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        warnings = [
            e.text
            for e in handle.transcript.entries
            if isinstance(e, NoticeEntry) and e.level == "warning"
        ]
    assert "image shot.png not sent: this model does not take images" in warnings
    assert image_parts(server.requests[0].messages) == []


def test_image_notices_in_the_transcript(snap_compare):
    history = fixed_history()
    history[2:2] = [
        ImageAttached(
            ts=FIXED_TS, name="shot.png", media_type="image/png", size=48_213, sha256="ab" * 32
        ),
        ImageAttached(
            ts=FIXED_TS, name="huge.png", note="huge.png is 9.1 MB, over the 3.0 MB an image may be"
        ),
    ]
    settings = settings_for(Path("/work/demo"), "http://127.0.0.1:9/v1", budget=50_000)

    async def steady_cursor(pilot) -> None:
        pilot.app.screen.query_one(PromptInput).cursor_blink = False

    app = KeelApp(settings, history=history)
    assert snap_compare(app, terminal_size=(120, 36), run_before=steady_cursor)
