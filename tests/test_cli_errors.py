"""Bad input gets one clear line on stderr and exit 1 or 2, never a traceback; the user's files are untouched."""

from __future__ import annotations

import pytest
from keel_cli import git_repo, run_keel

from keel.agent.harness.testing.scripted_server import Reply

MODEL = ("--model", "openai/any", "--api-base", "http://127.0.0.1:9/v1")


def one_clear_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith("keel: ")
    return lines[0]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("run", "--frobnicate", "hi"), 2, "unrecognized arguments: --frobnicate"),
        (("run", "--output-format", "xml", "hi"), 2, "invalid choice: 'xml'"),
        (("run", "--budget", "lots", "hi"), 2, "invalid int value: 'lots'"),
        (("run", *MODEL), 2, "needs a prompt"),
        (
            ("run", *MODEL, "--prompt-file", "missing.md"),
            2,
            "cannot read the prompt file missing.md",
        ),
        (("run", *MODEL, "--cwd", "/no/such/dir", "hi"), 2, "is not a directory"),
        (("run", *MODEL, "--resume", "nosuchsession"), 2, "no single session matches"),
        (("nosuchcommand",), 2, "invalid choice: 'nosuchcommand'"),
        (("run", "--badflag"), 2, "unrecognized arguments: --badflag (see `keel run --help`)"),
        (("run", *MODEL, ""), 2, "the prompt is empty; say what to do"),
        (
            ("run", *MODEL, "--context-window", "10", "hi"),
            2,
            "--context-window: 10 tokens is too small",
        ),
        (
            ("run", "--model", "nonsense", "hi"),
            2,
            "unknown model 'nonsense': name it PROVIDER/MODEL",
        ),
        (
            ("run", "--model", "nonsense", "--api-base", "http://127.0.0.1:9/v1", "hi"),
            2,
            "use --model openai/nonsense",
        ),
        (
            ("run", "--api-base", "http://127.0.0.1:9/v1", "hi"),
            2,
            "cannot reach http://127.0.0.1:9/v1 to ask which model it serves",
        ),
    ],
)
def test_usage_errors(tmp_path, args, code, says):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_keel(*args, cwd=repo, home=tmp_path / "home", timeout=60)
    assert result.returncode == code
    assert says in one_clear_line(result.stderr)


def test_a_missing_api_key_fails_at_once_naming_the_variable(tmp_path):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    result = run_keel(
        "run", "--model", "openai/gpt-4o-mini", "hi", cwd=repo, home=home, unset=("OPENAI_API_KEY",)
    )
    assert result.returncode == 2
    line = one_clear_line(result.stderr)
    assert "openai/gpt-4o-mini needs OPENAI_API_KEY" in line and "keel models" in line
    assert not (home / "sessions").exists()  # refused before any session began


def test_a_local_server_needs_no_key_through_litellm_either(scripted_server, tmp_path):
    server = scripted_server([Reply(text="hello")])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "hi",
        cwd=repo,
        home=tmp_path / "home",
        unset=("OPENAI_API_KEY",),
        KEEL_TRANSPORT="litellm",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello"


def test_an_api_base_without_a_model_uses_the_model_it_serves(scripted_server, tmp_path):
    server = scripted_server([Reply(text="hello from the server")], model_name="served-coder")
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_keel(
        "run",
        "--api-base",
        server.url,
        "--max-steps",
        "1",
        "--output-format",
        "stream-json",
        "hi",
        cwd=repo,
        home=tmp_path / "home",
    )
    assert result.returncode == 0, result.stderr
    assert result.events[0]["model"] == "openai/served-coder"
    assert [request.body["model"] for request in server.requests] == ["served-coder"]

    several = scripted_server(served_models=["coder-7b", "coder-32b"])
    result = run_keel("run", "hi", cwd=repo, home=tmp_path / "home", KEEL_API_BASE=several.url)
    assert result.returncode == 2
    line = one_clear_line(result.stderr)
    assert "serves 2 models (coder-7b, coder-32b); choose one with --model" in line
    assert not several.requests


def test_unreachable_api_base_fails_after_retries_with_one_line(tmp_path):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    config = tmp_path / "home" / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("retries = 1\nretry_base_delay = 0.01\n")
    result = run_keel("run", *MODEL, "hello", cwd=repo, home=tmp_path / "home", timeout=120)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "APIConnectionError" in result.stderr or "InternalServerError" in result.stderr
    assert "127.0.0.1:9" in result.stderr or "Connection" in result.stderr


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('modle = "x"\n', "unknown key 'modle'; allowed keys here: model, api_base"),
        ('approval = "yolo"\n', "bad value for 'approval'"),
        ("[context]\nsummarize_at = 3\n", "bad value for 'context.summarize_at'"),
        (
            "[sandbox]\nnetwork_on = true\n",
            "unknown key 'sandbox.network_on'; allowed keys here: mode, network",
        ),
        ("model = \n", "not valid TOML"),
    ],
)
def test_config_errors_name_the_file_and_the_key(tmp_path, text, says):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    config = repo / ".keel" / "config.toml"
    config.parent.mkdir()
    config.write_text(text)
    result = run_keel("run", *MODEL, "hi", cwd=repo, home=tmp_path / "home", timeout=60)
    assert result.returncode == 2
    line = one_clear_line(result.stderr)
    assert str(config) in line and says in line
    assert config.read_text() == text  # nothing the user had is touched


def test_version_is_fast_path(tmp_path):
    result = run_keel("--version", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 0 and result.stdout.startswith("keel ")
