"""Any local GGUF: `keel-local/<path>` and `--model-file` name a file, checked before anything starts, sized from
its header for the small-model profile, listed by `keel models`, and (slow) a second GGUF run end to end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel
from local_model_support import PROJECT, needs_llama
from tiny_gguf import (
    CONTEXT,
    REPLY,
    SMALL_PARAMETERS,
    TEMPLATE,
    write_small_gguf,
)

from keel.agent.cli.args import parse
from keel.agent.cli.flags import config_flags
from keel.agent.core.api import embedded_model_name
from keel.agent.core.config import KeelConfig
from keel.agent.core.errors import ConfigError
from keel.agent.core.model.local.catalog import QWEN_05B
from keel.agent.core.model.local.gguf_file import NotGguf, read_gguf_header
from keel.agent.core.model.local.names import file_of
from keel.agent.core.model.local.spec import describe_embedded
from keel.agent.core.settings import settings_from_config


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write_small_gguf(tmp_path / "files" / "small.gguf")


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "files").mkdir()
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))


def test_the_header_gives_architecture_parameters_window_and_template(small, tmp_path):
    info = read_gguf_header(small)
    assert (info.architecture, info.name) == ("llama", "keel small test model")
    assert info.parameters == SMALL_PARAMETERS  # the tensors' elements, past the vocabulary array
    assert info.context_length == CONTEXT and info.chat_template == TEMPLATE
    stated = write_small_gguf(tmp_path / "files" / "stated.gguf", parameter_count=7_000_000_000)
    assert read_gguf_header(stated).billions == 7.0  # general.parameter_count wins when present
    untemplated = write_small_gguf(tmp_path / "files" / "plain.gguf", template=None)
    assert read_gguf_header(untemplated).chat_template is None


def test_a_file_that_is_not_gguf_or_is_cut_short_is_not_gguf(small, tmp_path):
    text = tmp_path / "files" / "notes.gguf"
    text.write_text("just some text\n")
    with pytest.raises(NotGguf, match="magic"):
        read_gguf_header(text)
    cut = tmp_path / "files" / "cut.gguf"
    cut.write_bytes(small.read_bytes()[:200])
    with pytest.raises(NotGguf, match="ends inside its header"):
        read_gguf_header(cut)


def test_keel_local_names_tell_a_file_from_a_catalog_name():
    assert file_of(QWEN_05B.model) is None and file_of("keel-local/") is None
    assert file_of("openai/model.gguf") is None
    for path in ("/abs/m.gguf", "./m.bin", "~/m.gguf", "models/m", "m.GGUF", "../m"):
        assert file_of(f"keel-local/{path}") == path


def test_a_file_is_described_by_its_absolute_path_and_its_own_window(small, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    name = f"keel-local/{small}"
    for given in (name, "keel-local/files/small.gguf", "keel-local/~/files/small.gguf"):
        endpoint = describe_embedded(None, given)
        assert endpoint.model == name and endpoint.path == small
        assert endpoint.context_window == CONTEXT  # what the file was made with, under keel's 16k
        assert embedded_model_name(given) == name
    assert describe_embedded(2_048, name).context_window == 2_048
    assert config_flags(parse(["run", "--model-file", "files/small.gguf", "hi"]))["model"] == name


def test_the_small_model_profile_sizes_a_file_by_its_header(small, tmp_path):
    settings = settings_from_config(KeelConfig(model=f"keel-local/{small}"), tmp_path, False, False)
    assert settings.model == f"keel-local/{small}" and settings.compact_prompt
    assert settings.context_window == CONTEXT and settings.tool_protocol == "native"
    big = write_small_gguf(tmp_path / "files" / "big.gguf", parameter_count=14_000_000_000)
    settings = settings_from_config(KeelConfig(model=f"keel-local/{big}"), tmp_path, False, False)
    assert not settings.compact_prompt


def test_a_missing_or_unusable_file_is_a_config_error_saying_what_is_wrong(small, tmp_path):
    (tmp_path / "files" / "notes.txt").write_text("hello\n")
    write_small_gguf(tmp_path / "files" / "plain.gguf", template=None)
    for name, said in (
        ("nope.gguf", "does not exist; give the path of a .gguf file"),
        ("notes.txt", "is not a GGUF model file"),
        ("plain.gguf", "has no chat template"),
    ):
        with pytest.raises(ConfigError, match=said):
            describe_embedded(None, f"keel-local/{tmp_path / 'files' / name}")


def test_run_and_the_tui_stop_before_starting_on_a_bad_model_file(small, tmp_path):
    (tmp_path / "files" / "notes.txt").write_text("hello\n")
    home = tmp_path / "home"
    cases = [
        (("run", "--model", "keel-local/files/nope.gguf", "hi"), "files/nope.gguf does not exist"),
        (("run", "--model-file", "files/notes.txt", "hi"), "notes.txt is not a GGUF model file"),
        (("--model-file", "files/nope.gguf"), "files/nope.gguf does not exist"),
        (
            ("run", "--model", "openai/x", "--model-file", str(small), "hi"),
            "--model and --model-file both choose the model",
        ),
    ]
    for args, said in cases:
        result = run_keel(*args, cwd=tmp_path, home=home, timeout=60)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1, (args, result.stderr)
        assert said in lines[0], lines[0]
    assert not (home / "sessions").exists()  # nothing started


def test_keel_models_lists_the_gguf_files_of_its_models_folder(small, tmp_path):
    home = tmp_path / "home"
    models = home / "models"
    (models / "more").mkdir(parents=True)
    (models / QWEN_05B.file).write_bytes(b"GGUF")  # the catalog's, by name
    os.link(small, models / "more" / "small.gguf")
    (models / "broken.gguf").write_text("not a model\n")
    result = run_keel("models", cwd=tmp_path, home=home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    listing = out[out.index(f"GGUF files in {models}:") :]
    assert f"  {QWEN_05B.file}  0.00 MB, the catalog's {QWEN_05B.model}\n" in listing
    assert "  broken.gguf  0.00 MB, cannot run: " in listing and "not a GGUF model file" in listing
    assert (
        f"  more/small.gguf  {small.stat().st_size / 1e6:.2f} MB, keel small test model (llama, {SMALL_PARAMETERS:,} parameters)\n"
        in listing
    )
    assert f'keel run --model-file {models / "more" / "small.gguf"} "..."' in listing
    assert "keel run --model keel-local/<path to .gguf>" in listing
    named = run_keel("models", cwd=tmp_path, home=home, KEEL_MODEL=f"keel-local/{small}")
    assert f"Configured model: keel-local/{small} (the GGUF file {small})" in named.stdout
    empty = run_keel("models", cwd=tmp_path, home=tmp_path / "elsewhere")
    assert f"No GGUF files in {tmp_path / 'elsewhere' / 'models'} yet." in empty.stdout


# ---------------------------------------------------------------- a second GGUF, run by llama.cpp


@pytest.mark.slow
@pytest.mark.timeout(300)
@needs_llama
def test_a_second_gguf_runs_via_keel_local_path_with_its_own_template(tiny_model, tmp_path):
    repo = git_repo(tmp_path / "repo", PROJECT)
    home = tmp_path / "home"
    relative = os.path.relpath(tiny_model, repo)
    for flags in (("--model", f"keel-local/{tiny_model}"), ("--model-file", relative)):
        result = run_keel(
            "run", *flags, "--output-format", "stream-json", "Say hello.", cwd=repo, home=home
        )
        assert result.returncode == 0, result.stderr
        started, final = result.events[0], result.events[-1]
        assert started["model"] == f"keel-local/{tiny_model}"
        assert started["context_window"] == CONTEXT
        assert final["type"] == "session.finished" and final["status"] == "completed"
        # it says REPLY only after the last token of its own template's generation prompt
        assert final["final_message"] == REPLY
        assert final["usage"]["completion_tokens"] == 3
    assert "assembling" not in result.stderr
    assert not (home / "models" / QWEN_05B.file).exists()  # the catalog's model was never touched
