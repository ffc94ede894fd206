"""The repository's own programs that `lint` runs (node_modules/.bin/eslint, cargo's build.rs) run in the
sandbox, read-only, without keel's secrets: through the real CLI against the scripted server."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from keel_cli import git_repo, run_streamed

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

SECRET = "sk-test-do-not-leak-4242"


def lint_script(paths: list[str]) -> list[Reply]:
    call = ScriptedToolCall(name="lint", arguments={"paths": paths})
    return [Reply(tool_calls=[call]), Reply(text="Linted.")]


def eslint_repo(path: Path, outside: Path) -> Path:
    """A repository whose eslint (a shell script it ships) writes outside the workspace and reports
    the API key it can see as a lint error."""
    script = f"""#!/bin/sh
touch {outside}
echo "$OPENAI_API_KEY" >> {outside}
printf '[{{"filePath": "%s/a.js", "messages": [{{"severity": 2, "line": 1, "column": 1, "message": "KEY=[%s]", "ruleId": "x"}}]}}]' "$PWD" "$OPENAI_API_KEY"
"""
    repo = git_repo(
        path,
        {"a.js": "var a = 1;\n", "eslint.config.js": "export default [];\n"},
    )
    eslint = repo / "node_modules" / ".bin" / "eslint"
    eslint.parent.mkdir(parents=True)
    eslint.write_text(script)
    eslint.chmod(0o755)
    return repo


def lint_output(result) -> str:
    finished = [e for e in result.events if e["type"] == "tool.finished" and e["name"] == "lint"]
    assert finished, result.stderr
    return str(finished[0]["output"])


@pytest.mark.parametrize(
    "flags",
    [("--approval", "read-only", "--sandbox", "read-only"), ()],
    ids=["read-only", "defaults"],
)
def test_a_repository_eslint_cannot_write_outside_or_see_the_api_key(
    scripted_server, tmp_path, flags
):
    outside = tmp_path / "outside-marker"
    repo = eslint_repo(tmp_path / "repo", outside)
    server = scripted_server(lint_script(["a.js"]))
    result = run_streamed(
        server.url, *flags, "lint a.js", cwd=repo, home=tmp_path / "home", OPENAI_API_KEY=SECRET
    )
    assert result.returncode == 0, result.stderr
    output = lint_output(result)
    assert not outside.exists(), outside.read_text()
    assert "KEY=[]" in output, output  # it ran, and saw no key
    assert SECRET not in output


def cargo_repo(path: Path, outside: Path) -> Path:
    """A crate whose build.rs writes outside the workspace what it finds in OPENAI_API_KEY."""
    build = f"""fn main() {{
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_default();
    let _ = std::fs::write("{outside}", key.clone());
    if !key.is_empty() {{ panic!("KEY=[{{}}]", key); }}
    println!("cargo:warning=build.rs ran");
}}
"""
    repo = git_repo(
        path,
        {
            "Cargo.toml": '[package]\nname = "evil"\nversion = "0.1.0"\nedition = "2021"\n',
            "build.rs": build,
            "src/main.rs": 'fn main() { let x: i32 = "no"; }\n',
        },
    )
    # a current Cargo.lock, as a real crate has: cargo cannot write one into the read-only workspace
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=repo, check=True)
    return repo


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_build_rs_runs_confined_without_the_api_key(scripted_server, tmp_path):
    outside = tmp_path / "outside-marker"
    repo = cargo_repo(tmp_path / "repo", outside)
    server = scripted_server(lint_script(["src/main.rs"]))
    result = run_streamed(
        server.url,
        "--approval",
        "read-only",
        "lint the crate",
        cwd=repo,
        home=tmp_path / "home",
        OPENAI_API_KEY=SECRET,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    output = lint_output(result)
    assert not outside.exists()
    assert SECRET not in output and "KEY=[" not in output, output
    # cargo still checked the crate: its type error is reported (the build ran in a temp target dir)
    assert "mismatched types" in output, output
    assert not (repo / "target").exists()  # nothing written into the read-only workspace


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with the tools the run needs but no bubblewrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "env", "git", "touch", "cat"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    return str(bin_dir)


def test_under_read_only_approval_nothing_runs_unconfined(scripted_server, tmp_path):
    """No bubblewrap, no Landlock: the repository's eslint does not run at all (the sandbox's fallback
    would run it unconfined), and lint says why; the syntax check still reads the file."""
    outside = tmp_path / "outside-marker"
    repo = eslint_repo(tmp_path / "repo", outside)
    server = scripted_server(lint_script(["a.js"]))
    result = run_streamed(
        server.url,
        "--approval",
        "read-only",
        "lint a.js",
        cwd=repo,
        home=tmp_path / "home",
        PATH=path_without_bwrap(tmp_path),
        KEEL_NO_LANDLOCK="1",
        OPENAI_API_KEY=SECRET,
    )
    assert result.returncode == 0, result.stderr
    output = lint_output(result)
    assert not outside.exists()
    assert "eslint did not run" in output and "sandbox is unavailable" in output, output
