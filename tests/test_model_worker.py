"""The embedded model runs in a worker process: its death is one clear error, keel lives on, the session resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env, run_keel
from local_model_support import PROJECT, linked_home, needs_llama, needs_pieces, worker_pid_of

PROMPT = "What files are in this directory? Use a tool."
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), needs_llama, needs_pieces]


def test_a_worker_killed_mid_run_is_one_error_then_the_session_resumes(assembled_default, tmp_path):
    repo = git_repo(tmp_path / "repo", PROJECT)
    home = linked_home(assembled_default, tmp_path / "home")
    keel = subprocess.Popen(
        [KEEL, "run", PROMPT, "--output-format", "stream-json"],
        cwd=repo,
        env=keel_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert keel.stdout is not None and keel.stderr is not None
    events, killed = [], None
    for line in keel.stdout:
        events.append(json.loads(line))
        if (
            killed is None
            and events[-1]["type"] == "model.progress"
            and events[-1]["stage"] == "prompt"
        ):
            killed = worker_pid_of(keel.pid)  # reading the first prompt: seconds of work left
            assert killed is not None, "no model worker among keel's children"
            os.kill(killed, signal.SIGSEGV)
    stderr = keel.stderr.read()
    assert keel.wait(timeout=60) == 1, stderr

    errors = [event for event in events if event["type"] == "error"]
    assert (
        len(errors) == 1 and errors[0]["fatal"] and errors[0]["error_class"] == "ModelWorkerDied"
    ), errors
    assert "SIGSEGV" in errors[0]["message"]
    assert (
        "the next worker loads the model without llama.cpp's extra weight buffers"
        in errors[0]["message"]
    )
    finished = events[-1]
    assert finished["type"] == "session.finished" and finished["status"] == "error"
    assert [line for line in stderr.splitlines() if line.startswith("keel:")] == [
        f"keel: error: ModelWorkerDied: {errors[0]['message']}"
    ]
    assert "Traceback" not in stderr

    models = run_keel("models", cwd=repo, home=home)
    assert "last crash" in models.stdout and "SIGSEGV" in models.stdout, models.stdout

    session_id = events[0]["session_id"]
    resumed = run_keel(
        "run",
        "--resume",
        session_id,
        "--output-format",
        "stream-json",
        cwd=repo,
        home=home,
        timeout=840,
    )
    assert resumed.returncode == 0, resumed.stderr
    again = resumed.events
    assert again[0]["type"] == "session.started" and again[0]["resumed"]
    assert again[-1]["type"] == "session.finished" and again[-1]["status"] == "completed"
    assert any(event["type"] == "tool.finished" and event["ok"] for event in again)


async def test_the_tui_survives_a_dead_worker_and_answers_the_next_prompt(
    assembled_default, tmp_path, monkeypatch
):
    """In the UI: a notice, the UI stays usable, and the next prompt starts a new worker that answers."""
    from tui_support import send, wait_until

    from keel.agent.core.config import KeelConfig
    from keel.tui.app import KeelApp, initial_settings
    from keel.tui.transcript import NoticeEntry

    monkeypatch.setenv("KEEL_HOME", str(linked_home(assembled_default, tmp_path / "home")))
    repo = git_repo(tmp_path / "repo", PROJECT)
    app = KeelApp(initial_settings(KeelConfig(), repo, []), KeelConfig())
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, PROMPT)
        await wait_until(
            pilot,
            lambda: "reading the prompt" in handle.stats.activity,
            "the prompt's reading",
            600,
        )
        worker = worker_pid_of(os.getpid())
        assert worker is not None
        os.kill(worker, signal.SIGSEGV)
        await wait_until(
            pilot, lambda: handle.stats.status == "error", "the worker's death to be reported", 120
        )
        notices = [
            e.text
            for e in handle.transcript.entries
            if isinstance(e, NoticeEntry) and e.level == "error"
        ]
        assert any("ModelWorkerDied" in text and "SIGSEGV" in text for text in notices), notices
        assert not handle.stats.activity

        await send(pilot, PROMPT)
        await wait_until(
            pilot, lambda: handle.stats.status not in ("error", "running"), "the next answer", 840
        )
        assert handle.stats.status == "done", handle.transcript.entries[-3:]
        replacement = worker_pid_of(os.getpid())
        assert replacement not in (None, worker)
        # it died in native code before its first reply (as in llama.cpp's AMX path): no extra buffers now
        assert b"KEEL_LOCAL_EXTRA_BUFFERS=0" in Path(
            f"/proc/{replacement}/environ"
        ).read_bytes().split(b"\0")
    assert sys.modules.get("llama_cpp") is None, "llama.cpp was loaded into the test process"


def test_the_worker_never_outlives_keel(assembled_default, tmp_path):
    """keel killed outright (no chance to clean up): its worker sees its pipe close and exits."""
    repo = git_repo(tmp_path / "repo", PROJECT)
    keel = subprocess.Popen(
        [KEEL, "run", PROMPT, "--output-format", "stream-json"],
        cwd=repo,
        env=keel_env(linked_home(assembled_default, tmp_path / "home")),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert keel.stdout is not None
    worker = None
    for line in keel.stdout:
        if json.loads(line)["type"] == "model.progress":
            worker = worker_pid_of(keel.pid)
            break
    assert worker is not None
    keel.kill()
    keel.wait()
    deadline = time.monotonic() + 60
    while (
        Path(f"/proc/{worker}").exists() and _state(worker) != "Z" and time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert not Path(f"/proc/{worker}").exists() or _state(worker) == "Z", "the worker outlived keel"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"
