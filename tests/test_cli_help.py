"""What keel says about itself: the help of each command, and the words of its messages, read from the real CLI."""

from __future__ import annotations

import re

import pytest
from keel_cli import git_repo, run_keel

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


def keel_help(tmp_path, *command: str) -> str:
    result = run_keel(*command, "--help", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.split())  # argparse wraps lines where it likes


def test_keel_help_says_that_keel_alone_opens_the_ui(tmp_path):
    said = keel_help(tmp_path)
    assert "`keel` alone" in said and "opens the terminal UI" in said
    assert "keel COMMAND --help" in said


def test_keel_help_names_plans_subagents_hooks_commands_skills_web_fetch_and_images(tmp_path):
    said = keel_help(tmp_path)
    for feature in ("todo list", "/plan", "subagents", "hooks", "Markdown command", "skills"):
        assert feature in said
    assert "web_fetch" in said and "--image FILE" in said


def test_the_model_file_runs_in_the_worker_not_in_process(tmp_path):
    for said in (keel_help(tmp_path), keel_help(tmp_path, "run")):
        assert "in keel's model worker process" in said and "in process" not in said
    models = run_keel("models", cwd=tmp_path, home=tmp_path / "home")
    assert models.returncode == 0, models.stderr
    assert "runs in process" not in models.stdout and "model worker process" in models.stdout


def test_run_output_format_has_help(tmp_path):
    said = keel_help(tmp_path, "run")
    assert re.search(
        r"--output-format \{text,json,stream-json\} text: .+; json: .+; stream-json: ", said
    )


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (("sessions",), "List the sessions started in this workspace"),
        (("models",), "Show the model keel uses here"),
        (("resume",), "Reopen a session in the terminal UI"),
        (("mcp",), "The MCP servers of the config"),
        (("mcp", "list"), "Start each configured MCP server"),
        (("bench", "check"), "Validate tasks"),
    ],
)
def test_every_command_has_a_description(tmp_path, command, says):
    assert says in keel_help(tmp_path, *command)


def test_bench_usage_names_the_commands_it_lists(tmp_path):
    said = keel_help(tmp_path, "bench")
    assert "keel bench [run] TASK..." in said and "{TASK...," not in said
    assert "{run,check,compare,new}" in said and "run the agent on tasks" in said
    check = keel_help(tmp_path, "bench", "check")
    assert "--agent-timeout" not in check and "keel's home" in check
    assert "--agent-timeout" in keel_help(tmp_path, "bench", "run")


@pytest.mark.parametrize(
    ("args", "help_named"),
    [
        (("run", "x", "--budget", "abc"), "keel run --help"),
        (("run", "x", "--bogus"), "keel run --help"),
        (("--budget", "abc"), "keel --help"),
        (("bench", "check", "suite", "--agent-timeout", "3"), "keel bench check --help"),
        (("bench", "suite", "--bogus"), "keel bench run --help"),
    ],
)
def test_a_usage_error_points_to_the_help_of_the_command_given(tmp_path, args, help_named):
    result = run_keel(*args, cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 2
    assert result.stderr.strip().endswith(f"(see `{help_named}`)"), result.stderr


def test_the_step_limit_counts_in_words(scripted_server, tmp_path):
    endless = lambda request: Reply(
        tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "a.txt"})]
    )
    server = scripted_server(endless)
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_keel("run", "--model", "openai/any", "--api-base", server.url, "--max-steps", "1",
                      "read a.txt", cwd=repo, home=tmp_path / "home")  # fmt: skip
    assert result.returncode == 3, result.stderr
    said = result.stdout + result.stderr
    assert "limit of 1 step" in said and "1 steps" not in said
