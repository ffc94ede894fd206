"""A hostile model or repository cannot make keel's own git run a program: the file tools refuse .git
and .keel, and the git keel runs (code_map's and lint's listings, checkpoints) ignores the
repository's fsmonitor, filters, textconv and the user's API keys."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from keel_cli import git_repo, run_keel

from keel.agent.core.git.runner import Git
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

SECRET = "sk-secret-for-the-model-provider"


def call(name: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


def keel_run(server_url: str, repo: Path, home: Path, *flags: str) -> list[dict[str, Any]]:
    """`keel run` with the scripted model, the provider key in its environment; the tool results."""
    result = run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server_url,
        "--output-format",
        "stream-json",
        *flags,
        "do it",
        cwd=repo,
        home=home,
        OPENAI_API_KEY=SECRET,
    )
    assert result.returncode == 0, result.stderr
    return [event for event in result.events if event["type"] == "tool.finished"]


def hostile_command(marker: Path) -> str:
    """A command git might run: it leaves `marker` behind, with the environment it saw."""
    return f"env >> {marker}; true"


@pytest.mark.parametrize("sandbox", ["workspace-write", "read-only"])
def test_the_model_cannot_plant_an_fsmonitor_in_git_config(scripted_server, tmp_path, sandbox):
    marker = tmp_path / "marker"
    repo = git_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    config_before = (repo / ".git/config").read_text()
    planted = f"[core]\n\tfsmonitor = {hostile_command(marker)}\n"
    server = scripted_server(
        [
            call("read_file", path=".git/config"),
            call("edit_file", path=".git/config", old_string="[core]\n", new_string=planted),
            call("write_file", path=".git/hooks/pre-commit", content="#!/bin/sh\ntouch x\n"),
            call("code_map"),
            call("lint", paths=["a.py"]),
            Reply(text="done"),
        ]
    )
    results = keel_run(
        server.url, repo, tmp_path / "home", "--approval", "auto-edit", "--sandbox", sandbox
    )
    edit, hook = results[1], results[2]
    why = "the sandbox is read-only" if sandbox == "read-only" else "is protected"
    assert not edit["ok"] and why in edit["output"], edit
    assert not hook["ok"] and why in hook["output"], hook
    assert results[3]["ok"], results[3]  # code_map ran its git ls-files
    assert (repo / ".git/config").read_text() == config_before
    assert not (repo / ".git/hooks/pre-commit").exists()
    assert not marker.exists(), marker.read_text()


def test_apply_patch_moves_adds_and_deletes_nothing_in_git_or_keel(scripted_server, tmp_path):
    repo = git_repo(tmp_path / "repo", {"run.sh": "#!/bin/sh\necho hi\n", ".keel/keep": "k\n"})
    (repo / "run.sh").chmod(0o755)
    (repo / "cfg").symlink_to(".git/config")
    move = (
        "*** Begin Patch\n*** Update File: run.sh\n*** Move to: .git/hooks/pre-commit\n"
        "@@\n #!/bin/sh\n-echo hi\n+echo pwned\n*** End Patch\n"
    )
    add = "*** Begin Patch\n*** Add File: .keel/config.toml\n+[sandbox]\n*** End Patch\n"
    delete = "*** Begin Patch\n*** Delete File: .git/HEAD\n*** End Patch\n"
    via_link = (
        "*** Begin Patch\n*** Update File: cfg\n@@\n [core]\n+\thooksPath = h\n*** End Patch\n"
    )
    server = scripted_server(
        [
            call("read_file", path="run.sh"),
            call("apply_patch", patch=move),
            call("apply_patch", patch=add),
            call("read_file", path=".git/HEAD"),
            call("apply_patch", patch=delete),
            call("read_file", path="cfg"),
            call("apply_patch", patch=via_link),
            call("write_file", path=".GIT/config", content="[core]\n"),
            Reply(text="done"),
        ]
    )
    results = keel_run(server.url, repo, tmp_path / "home")
    refused = [results[i] for i in (1, 2, 4, 6, 7)]
    assert all(not r["ok"] and "is protected" in r["output"] for r in refused), refused
    assert not (repo / ".git/hooks/pre-commit").exists()
    assert (repo / "run.sh").read_text() == "#!/bin/sh\necho hi\n"
    assert not (repo / ".keel/config.toml").exists() and (repo / ".git/HEAD").exists()
    assert "hooksPath" not in (repo / ".git/config").read_text()


def test_a_moved_file_keeps_only_its_permission_bits(scripted_server, tmp_path):
    repo = git_repo(tmp_path / "repo", {"tool.sh": "#!/bin/sh\necho hi\n"})
    (repo / "tool.sh").chmod(0o4755)  # setuid: a move must not hand it on
    move = (
        "*** Begin Patch\n*** Update File: tool.sh\n*** Move to: bin/tool.sh\n"
        "@@\n #!/bin/sh\n-echo hi\n+echo moved\n*** End Patch\n"
    )
    server = scripted_server(
        [call("read_file", path="tool.sh"), call("apply_patch", patch=move), Reply(text="done")]
    )
    results = keel_run(server.url, repo, tmp_path / "home")
    assert results[1]["ok"], results[1]
    assert stat.S_IMODE((repo / "bin/tool.sh").stat().st_mode) == 0o755


def hostile_repository(path: Path, marker: Path) -> Path:
    """A repository whose own config runs programs: fsmonitor, filter and diff drivers, some of them
    in a work-tree file that .git/config includes."""
    repo = git_repo(path, {"a.py": "x = 1\n", ".gitattributes": "* filter=evil diff=evil\n"})
    command = hostile_command(marker)
    for key, value in {
        "core.fsmonitor": command,
        "filter.evil.clean": command,
        "filter.evil.smudge": command,
        "diff.evil.textconv": command,
    }.items():
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    # config in a file of the work tree (one a model can write), included from .git/config
    (repo / "inc.cfg").write_text(
        f'[filter "evil"]\n\tprocess = {command}\n[diff "evil"]\n\tcommand = {command}\n'
    )
    subprocess.run(["git", "config", "include.path", "../inc.cfg"], cwd=repo, check=True)
    marker.unlink(missing_ok=True)  # the commit above ran the filter already
    return repo


def test_keel_runs_no_program_a_hostile_repository_configured(scripted_server, tmp_path):
    marker = tmp_path / "marker"
    repo = hostile_repository(tmp_path / "repo", marker)
    server = scripted_server(
        [
            call("code_map"),
            call("lint", paths=["a.py"]),
            call("write_file", path="b.py", content="y = 2\n"),
            Reply(text="done"),
        ]
    )
    results = keel_run(server.url, repo, tmp_path / "home")
    assert all(r["ok"] for r in results), results
    assert not marker.exists(), marker.read_text()


def test_keel_s_git_runner_runs_no_repository_program_and_hides_api_keys(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    repo = hostile_repository(tmp_path / "repo", marker)
    (repo / "a.py").write_text("x = 2\n")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    git = Git(repo, config=["alias.environment=!env"])
    git.text("status")
    git.text("diff", "HEAD")
    git.text("add", "-A")
    git.text("commit", "-q", "-m", "two")
    git.text("log", "-p")
    assert not marker.exists(), marker.read_text()
    seen = git.text("environment")  # an alias keel itself chose: shows what git's children get
    assert SECRET not in seen and "GIT_CONFIG_NOSYSTEM=1" in seen
    assert os.environ["OPENAI_API_KEY"] == SECRET
