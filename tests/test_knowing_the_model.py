"""Knowing the model (issue 29, point 3): its size and window from the server that runs it (llama.cpp's and
vLLM's `/v1/models`, Ollama's `/api/show`), `--profile` to say it by hand, and a model that fails at calls early
moved to the small-model profile for the rest of the session, as an event a resume keeps."""

from __future__ import annotations

from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel
from session_support import until_finished
from small_model_support import CALC, CAPABLE, FIX, call, keel_messages, run_task, served_settings

from keel.agent.core.protocol import UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.store import read_events
from keel.agent.harness.testing.scripted_server import Reply, ScriptedServer

QWEN_15B_PARAMS = 1_543_714_304  # what llama.cpp's server reports for Qwen2.5-Coder-1.5B
BROKEN = Reply(text='{"name": "read_file", "arguments": {"path": calc.py}}')  # not JSON: corrected


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", CALC)


def keel_run(server: ScriptedServer, workspace: Path, tmp_path: Path, *flags: str) -> list[dict]:
    """`keel run` as the issue's user ran it: a generic name, the server's URL; the events it printed."""
    result = run_keel(
        "run",
        "--model",
        "openai/local",
        "--api-base",
        server.url,
        "--output-format",
        "stream-json",
        *flags,
        "what does calc.py do?",
        cwd=workspace,
        home=tmp_path / "home",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.events


def llama_cpp(scripted_server, params: int = QWEN_15B_PARAMS) -> ScriptedServer:
    return scripted_server(
        [Reply(text="It subtracts.")],
        shape="llama.cpp",
        served_models=["local"],
        model_params=params,
    )


def test_a_small_model_behind_llama_cpp_gets_the_small_profile(
    scripted_server, workspace, tmp_path
):
    server = llama_cpp(scripted_server)
    events = keel_run(server, workspace, tmp_path, "--context-window", "16384")
    started = events[0]
    assert started["type"] == "session.started" and started["profile"] == "small"
    assert "1.5B" in started["profile_reason"] and "/models" in started["profile_reason"]
    request = server.requests[0]
    assert "apply_patch" not in request.tool_names and "edit_file" in request.tool_names
    assert request.body["temperature"] == 0.2
    assert started["context_window"] == 16384  # the flag's window, not the model's training one


def test_a_large_model_behind_llama_cpp_keeps_the_full_profile(
    scripted_server, workspace, tmp_path
):
    server = llama_cpp(scripted_server, params=32_763_876_352)
    events = keel_run(server, workspace, tmp_path)
    assert events[0]["profile"] == "full"
    assert "apply_patch" in server.requests[0].tool_names


def test_profile_full_overrides_what_the_server_says(scripted_server, workspace, tmp_path):
    server = llama_cpp(scripted_server)
    events = keel_run(server, workspace, tmp_path, "--profile", "full")
    assert events[0]["profile"] == "full" and "--profile" in events[0]["profile_reason"]
    assert "apply_patch" in server.requests[0].tool_names
    assert "temperature" not in server.requests[0].body


def test_profile_small_makes_any_model_small(scripted_server, workspace, tmp_path):
    server = scripted_server([Reply(text="It subtracts.")], served_models=["local"])
    events = keel_run(server, workspace, tmp_path, "--profile", "small")
    assert events[0]["profile"] == "small"
    assert "apply_patch" not in server.requests[0].tool_names


def test_an_unknown_profile_is_a_usage_error(workspace, tmp_path):
    result = run_keel("run", "--profile", "tiny", "hi", cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 2 and "small, full, auto" in result.stderr


def test_llama_cpp_props_sets_the_window(scripted_server, workspace, tmp_path):
    server = scripted_server(
        [Reply(text="It subtracts.")],
        shape="llama.cpp",
        served_models=["local"],
        model_params=QWEN_15B_PARAMS,
        model_window=8_192,
    )
    events = keel_run(server, workspace, tmp_path)
    assert events[0]["context_window"] == 8_192  # what `-c` gave it, not the 32k it was trained for


def test_vllm_max_model_len_sets_the_window(scripted_server, workspace, tmp_path):
    server = scripted_server(
        [Reply(text="It subtracts.")],
        shape="vllm",
        served_models=["local"],
        model_window=12_288,
    )
    events = keel_run(server, workspace, tmp_path)
    assert events[0]["context_window"] == 12_288
    assert (
        events[0]["profile"] == "full"
    )  # the window is what the server allows, not the model's size
    server = scripted_server(
        [Reply(text="ok")], shape="vllm", served_models=["local"], model_window=12_288
    )
    events = keel_run(server, workspace, tmp_path, "--context-window", "20000")
    assert events[0]["context_window"] == 20_000  # the flag wins


def test_a_plain_server_changes_nothing(scripted_server, workspace, tmp_path):
    server = scripted_server([Reply(text="It subtracts.")], served_models=["local"])
    events = keel_run(server, workspace, tmp_path)
    assert events[0]["profile"] == "full" and events[0]["context_window"] == 32_768
    assert "apply_patch" in server.requests[0].tool_names


def test_ollama_api_show_gives_the_size(scripted_server, workspace):
    server = scripted_server(shape="ollama", model_params=1_500_000_000)
    root = server.url.removesuffix("/v1")
    chosen = served_settings(server, workspace, "ollama/qwen-coder", api_base=root)
    assert chosen.compact_prompt and "1.5B" in chosen.profile_reason
    big = scripted_server(shape="ollama", model_params=32_000_000_000)
    root = big.url.removesuffix("/v1")
    assert not served_settings(big, workspace, "ollama/qwen-coder", api_base=root).compact_prompt


# ------------------------------------------------ a model that fails at calls early


async def test_early_failed_calls_move_the_session_to_the_small_profile(scripted_server, workspace):
    server = scripted_server([BROKEN, BROKEN, call("edit_file", **FIX), Reply(text="fixed")])
    events, log = await run_task(served_settings(server, workspace, CAPABLE), "make add add")
    assert events[-1].status == "completed" and len(keel_messages(events, "correction")) == 2
    changed = [e for e in log if e.type == "profile.changed"]
    assert len(changed) == 1 and changed[0].model_dump()["profile"] == "small"
    assert "2 of" in changed[0].model_dump()["reason"]
    first, second, third = server.requests[:3]
    assert "apply_patch" in first.tool_names and "apply_patch" in second.tool_names
    assert "apply_patch" not in third.tool_names and "edit_file" in third.tool_names
    assert "[keel status]" in str(first.messages) and "[keel status]" not in str(third.messages)
    # served from 127.0.0.1: a low temperature and a reply limit from the move on
    assert "temperature" not in first.body and third.body["temperature"] == 0.2
    assert "max_tokens" not in first.body and third.body["max_tokens"] == 2_048
    assert "return a + b" in (workspace / "calc.py").read_text()


async def test_a_resumed_session_keeps_the_small_profile(scripted_server, workspace):
    server = scripted_server([BROKEN, BROKEN, Reply(text="It subtracts."), Reply(text="Still.")])
    settings = served_settings(server, workspace, CAPABLE)
    async with Session(settings) as session:
        session.submit(UserPrompt(text="what does calc.py do?"))
        await until_finished(session)
        path = session.log.path
    assert any(e.type == "profile.changed" for e in read_events(path))
    async with Session(settings, resume=path) as resumed:
        assert resumed.state.small_profile
        session_started = None
        async for event in resumed.events():
            session_started = event
            break
        resumed.submit(UserPrompt(text="and now?"))
        await until_finished(resumed)
    assert session_started is not None and session_started.model_dump()["profile"] == "small"
    assert "apply_patch" not in server.requests[-1].tool_names


async def test_a_profile_said_by_hand_is_not_moved(scripted_server, workspace):
    server = scripted_server([BROKEN, BROKEN, call("edit_file", **FIX), Reply(text="fixed")])
    chosen = served_settings(server, workspace, CAPABLE, prompt="full")
    events, log = await run_task(chosen, "make add add")
    assert events[-1].status == "completed" and len(keel_messages(events, "correction")) == 2
    assert not any(e.type == "profile.changed" for e in log)
    assert all("apply_patch" in r.tool_names for r in server.requests)


async def test_one_early_failure_or_late_ones_do_not_move_the_session(scripted_server, workspace):
    reads = [call("read_file", path="calc.py", offset=line) for line in (1, 2, 3, 4, 5, 6)]
    server = scripted_server([BROKEN, *reads, BROKEN, Reply(text="It subtracts.")])
    events, log = await run_task(
        served_settings(server, workspace, CAPABLE), "what does calc.py do?"
    )
    assert events[-1].status == "completed" and len(keel_messages(events, "correction")) == 2
    assert not any(e.type == "profile.changed" for e in log)  # the second came after the start
    assert all("apply_patch" in r.tool_names for r in server.requests)


def test_text_output_says_the_profile_and_why(scripted_server, workspace, tmp_path):
    server = llama_cpp(scripted_server)
    result = run_keel(
        "run",
        "--model",
        "openai/local",
        "--api-base",
        server.url,
        "what does calc.py do?",
        cwd=workspace,
        home=tmp_path / "home",
    )
    assert result.returncode == 0 and result.stdout.strip() == "It subtracts."
    assert "small-model profile: its server" in result.stderr and "1.5B" in result.stderr


def test_the_config_says_small_as_the_flag_does(scripted_server, workspace):
    server = scripted_server(served_models=["local"])
    assert served_settings(server, workspace, "openai/local", prompt="small").compact_prompt
