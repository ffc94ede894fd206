"""`keel undo` after a real `keel run`: the turn's edits and the files its commands made are rolled back."""

from __future__ import annotations

import subprocess

from keel_cli import git_repo, run_keel

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


def test_undo_rolls_back_the_last_turn(scripted_server, tmp_path):
    repo = git_repo(tmp_path / "repo", {"app.py": "print('v1')\n"})
    home = tmp_path / "home"
    server = scripted_server(
        [
            Reply(
                tool_calls=[
                    ScriptedToolCall(
                        name="edit_file",
                        arguments={"path": "app.py", "old_string": "v1", "new_string": "v2"},
                    )
                ]
            ),
            Reply(
                tool_calls=[
                    ScriptedToolCall(
                        name="run_command", arguments={"command": "echo made > made.txt"}
                    )
                ]
            ),
            Reply(text="Changed it."),
        ]
    )
    run = run_keel(
        "run", "--model", "openai/any", "--api-base", server.url, "change it", cwd=repo, home=home
    )
    assert run.returncode == 0, run.stderr
    assert (repo / "app.py").read_text() == "print('v2')\n" and (repo / "made.txt").exists()
    index_before = (repo / ".git" / "index").read_bytes()

    listed = run_keel("undo", "--list", cwd=repo, home=home)
    assert listed.returncode == 0 and "change it" in listed.stdout

    answered = run_keel(
        "undo", cwd=repo, home=home, stdin="n\n"
    )  # `echo n | keel undo`: no terminal to ask on
    assert answered.returncode == 2 and "--yes" in answered.stderr
    # nothing claims a restore that did not happen: it says what would change and how to confirm
    assert "Restoring checkpoint" not in answered.stdout
    assert (
        "would restore" in answered.stdout
        and "changing 2 files:" in answered.stdout
        and "app.py" in answered.stdout
    )
    assert "nothing was changed" in answered.stderr
    assert "run `keel undo --yes`" in answered.stderr
    assert (repo / "app.py").read_text() == "print('v2')\n" and (repo / "made.txt").exists()

    undone = run_keel("undo", "--yes", cwd=repo, home=home)
    assert undone.returncode == 0, undone.stderr
    assert "Restoring checkpoint" in undone.stdout and "Restored 2 files" in undone.stdout
    assert (repo / "app.py").read_text() == "print('v1')\n"
    assert not (repo / "made.txt").exists()
    assert (
        repo / ".git" / "index"
    ).read_bytes() == index_before  # before `git status`, which refreshes it
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
