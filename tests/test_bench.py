"""`keel bench` end to end: the real command on Harbor tasks made here, the scripted model, bubblewrap."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections import Counter
from pathlib import Path

import pytest
from bench_support import make_task
from keel_cli import KeelResult, run_keel

from keel.agent.harness.bench.results import BenchSummary, read_rows
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="keel bench's local environment needs bubblewrap (bash .ci/run installs it)",
)


def bench(*args: str, cwd: Path, home: Path, timeout: float = 240) -> KeelResult:
    return run_keel("bench", *args, cwd=cwd, home=home, timeout=timeout)


class Solver:
    """A scripted agent: looks around (pwd, ls /tests), then fixes calc.py on the attempts FIXES says."""

    def __init__(self, fixes: dict[str, list[bool]]) -> None:
        self.fixes = fixes
        self.started: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.outputs: list[str] = []

    def __call__(self, request: ChatRequest) -> Reply:
        name = re.search(r"task (easy|hard)", str(request.messages)).group(1)
        tools = [m for m in request.messages if m.get("role") == "tool"]
        if not tools:
            command = "pwd; echo $GREETING; ls /tests 2>&1 | head -1; cat /app/README.md"
            return Reply(
                tool_calls=[ScriptedToolCall(name="run_command", arguments={"command": command})]
            )
        if len(tools) == 1:
            self.outputs.append(str(tools[0]["content"]))
            with self.lock:
                fix = self.fixes[name][self.started[name] % len(self.fixes[name])]
                self.started[name] += 1
            new = "a + b" if fix else "a * b"
            edit = {"path": "/app/calc.py", "old_string": "a - b", "new_string": new}
            return Reply(tool_calls=[ScriptedToolCall(name="edit_file", arguments=edit)])
        return Reply(text=f"done with {name}")


def test_a_scripted_model_on_two_tasks_three_attempts(scripted_server, tmp_path):
    suite = tmp_path / "suite"
    make_task(suite, "easy", instruction="task easy: add() is wrong")
    make_task(suite, "hard", instruction="task hard: add() is wrong")
    solver = Solver({"easy": [True], "hard": [False, True, False]})
    server = scripted_server(solver)
    out, home = tmp_path / "out", tmp_path / "home"
    result = bench(
        str(suite), "--model", "openai/any", "--api-base", server.url, "-k", "3", "-j", "2",
        "--out", str(out), "--env", "local", cwd=tmp_path, home=home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = read_rows(out / "results.jsonl")
    assert sorted(row.key for row in rows) == [(t, n) for t in ("easy", "hard") for n in (1, 2, 3)]
    passes = Counter(row.id for row in rows if row.passed)
    assert passes == {"easy": 3, "hard": 1}
    for row in rows:
        assert row.status == "completed" and row.agent == "keel" and row.model == "openai/any"
        assert row.reward == (1.0 if row.passed else 0.0)
        assert row.prompt_tokens > 0 and row.completion_tokens > 0 and row.steps >= 2
        assert row.tokens == row.prompt_tokens + row.completion_tokens
        patch = Path(row.patch).read_text()
        assert ("+    return a + b" if row.passed else "+    return a * b") in patch
        assert Path(row.session_log).is_file()
    # the agent's commands ran in /app, with the Dockerfile's ENV, and never saw the tests
    assert solver.outputs and all(out_.startswith("/app\nhello\n") for out_ in solver.outputs)
    assert all("No such file" in output and "A calculator." in output for output in solver.outputs)
    summary = BenchSummary.model_validate_json((out / "summary.json").read_text())
    easy, hard = summary.tasks
    assert (easy.pass_at_1, easy.pass_at_k) == (1.0, 1.0)
    # n=3, c=1: pass@1 = 1/3, pass@3 = 1 - C(2,3)/C(3,3) = 1
    assert hard.pass_at_1 == pytest.approx(1 / 3) and hard.pass_at_k == 1.0
    assert summary.pass_at_1 == pytest.approx(2 / 3) and summary.k == 3
    assert summary.median_tokens > 0 and summary.label == "openai/any"
    assert "pass@3" in result.stdout and "hard" in result.stdout
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and "hard" in page
    assert (out / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert re.search(r"keel bench: hard#\d completed (pass|fail)", result.stderr)
    assert not (out / "work").exists() or not any((out / "work").iterdir())


def test_check_says_valid_and_invalid_tasks_and_skips_what_needs_docker(tmp_path):
    suite = tmp_path / "suite"
    make_task(suite, "good")
    make_task(suite, "nop-passes", solution="def add(a, b):\n    return a + b\n",
              test_sh="#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n")  # fmt: skip
    make_task(suite, "broken-solution", solution="def add(a, b):\n    return 0\n")
    make_task(
        suite, "needs-root", dockerfile="FROM debian\nWORKDIR /app\nRUN apt-get install -y gcc\n"
    )
    result = bench("check", str(suite), "--env", "local", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 1, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert re.search(r"good\s+1\s+0\s+valid", lines["good"])
    assert "nop passes" in lines["nop-passes"]
    assert "the oracle's reward is 0" in lines["broken-solution"]
    assert "skipped" in lines["needs-root"] and "system packages" in lines["needs-root"]
    assert "1/4 tasks valid" in result.stdout
    only_good = bench(
        "check", str(suite / "good"), "--env", "local", cwd=tmp_path, home=tmp_path / "home"
    )
    assert only_good.returncode == 0 and "1/1 tasks valid" in only_good.stdout


def test_oracle_and_nop_runs_compare_on_one_plot(tmp_path):
    suite = tmp_path / "suite"
    make_task(suite, "one")
    make_task(suite, "two")
    home = tmp_path / "home"
    for agent in ("oracle", "nop"):
        result = bench(str(suite), "--agent", agent, "--out", str(tmp_path / agent), "--env", "local",
                       cwd=tmp_path, home=home)  # fmt: skip
        assert result.returncode == 0, result.stderr
    oracle = json.loads((tmp_path / "oracle" / "summary.json").read_text())
    nop = json.loads((tmp_path / "nop" / "summary.json").read_text())
    assert (oracle["pass_at_1"], nop["pass_at_1"]) == (1.0, 0.0)
    assert oracle["label"] == "oracle" and oracle["tokens"] == 0
    compared = bench("compare", str(tmp_path / "oracle"), str(tmp_path / "nop"), "--out", str(tmp_path / "cmp"),
                     cwd=tmp_path, home=home)  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert re.search(r"oracle\s+2\s+1\.000", compared.stdout) and re.search(
        r"nop\s+2\s+0\.000", compared.stdout
    )
    assert (tmp_path / "cmp" / "compare.png").read_bytes()[:4] == b"\x89PNG"
    assert "pass@1 per task" in (tmp_path / "cmp" / "compare.html").read_text()


def test_bad_input_is_a_usage_error(tmp_path):
    home = tmp_path / "home"
    missing = bench(str(tmp_path / "nowhere"), cwd=tmp_path, home=home)
    assert missing.returncode == 2 and "is not a folder" in missing.stderr
    empty = bench("check", str(tmp_path), cwd=tmp_path, home=home)
    assert empty.returncode == 2 and "holds no Harbor task" in empty.stderr
    no_run = bench("compare", str(tmp_path), cwd=tmp_path, home=home)
    assert no_run.returncode == 2 and "no summary.json" in no_run.stderr
    bare = run_keel("bench", cwd=tmp_path, home=home)
    assert bare.returncode == 2 and "keel bench needs tasks" in bare.stderr


def test_docker_environment_without_a_daemon_skips_every_task_with_the_reason(tmp_path):
    from keel.agent.harness.bench.docker_env import docker_problem

    if docker_problem() is None:
        pytest.skip("a Docker daemon answers here")
    make_task(tmp_path / "suite", "one")
    result = bench(str(tmp_path / "suite"), "--agent", "oracle", "--env", "docker", "--out",
                   str(tmp_path / "out"), cwd=tmp_path, home=tmp_path / "home")  # fmt: skip
    assert result.returncode == 0, result.stderr
    (row,) = read_rows(tmp_path / "out" / "results.jsonl")
    assert row.status == "skipped" and row.reason.startswith("the Docker environment: ")
    assert "skipped: the Docker environment" in result.stdout


def test_commands_in_a_container_are_docker_exec_in_its_workdir_with_the_task_env():
    from keel.tools.exec.sandbox import container_argv
    from keel.tools.exec.sandbox_policy import SandboxPolicy

    policy = SandboxPolicy(container="keel-bench-x", workspace_mount="/app", env={"GREETING": "hi"})
    argv = container_argv(policy, ["bash", "-c", "pytest -q"])
    assert argv[:4] == ["docker", "exec", "-w", "/app"]
    assert argv[-4:] == ["keel-bench-x", "bash", "-c", "pytest -q"]
    assert ["-e", "GREETING=hi"] == argv[
        argv.index("GREETING=hi") - 1 : argv.index("GREETING=hi") + 1
    ]
    assert "PAGER=cat" in argv  # the non-interactive variables every command gets


def test_a_verifier_that_never_ran_is_an_environment_error_not_a_failure(tmp_path):
    suite = tmp_path / "suite"
    make_task(suite, "good")
    make_task(suite, "no-verifier", test_sh="#!/bin/bash\nnot-a-command-here\n")  # exit 127
    out = tmp_path / "out"
    result = bench(str(suite), "--agent", "oracle", "--out", str(out), "--env", "local",
                   cwd=tmp_path, home=tmp_path / "home")  # fmt: skip
    assert result.returncode == 0, result.stderr
    broken = next(row for row in read_rows(out / "results.jsonl") if row.id == "no-verifier")
    assert broken.status == "verifier_failed" and broken.reward is None and not broken.judged
    assert "exited with 127" in broken.reason and "command not found" in broken.reason
    assert "bwrap" not in broken.reason  # the script's exit, not the sandbox's command line
    summary = BenchSummary.model_validate_json((out / "summary.json").read_text())
    assert (summary.pass_at_1, summary.environment_errors, summary.errors) == (1.0, 1, 0)
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "environment error (no verdict): the verifier gave no reward" in lines["no-verifier"]
    total = result.stdout.strip().splitlines()[-1]
    assert "1 task judged" in total and "pass@1 1.000" in total
    assert "1 environment error (no verdict, not a failure)" in total
    assert "no-verifier#1 verifier_failed no verdict" in result.stderr
    assert "pass 1/1 (100%)" in result.stderr
    only_broken = bench(str(suite / "no-verifier"), "--agent", "oracle", "--out", str(tmp_path / "b"),
                        "--env", "local", cwd=tmp_path, home=tmp_path / "home")  # fmt: skip
    assert only_broken.returncode == 1  # no attempt got a verdict
    assert "0 tasks judged" in only_broken.stdout


def test_check_reports_each_attempt_against_what_it_should_do_and_keeps_logs_in_keels_home(
    tmp_path,
):
    suite = tmp_path / "suite"
    make_task(suite, "good")
    home = tmp_path / "home"
    result = bench("check", str(suite), "--env", "local", cwd=tmp_path, home=home)
    assert result.returncode == 0, result.stderr
    assert "good oracle passed, as it should" in result.stderr
    assert "good nop failed, as it should" in result.stderr
    assert "as expected 2/2" in result.stderr
    assert "completed fail" not in result.stderr and "pass 1/2" not in result.stderr
    (folder,) = (home / "bench").iterdir()
    assert folder.name.startswith("check-") and (folder / "results.jsonl").is_file()
    assert (folder / "oracle" / "logs" / "good.1.verifier.log").is_file()
    assert f"results and logs in {folder}" in result.stderr
    again = bench("check", str(suite), "--env", "local", cwd=tmp_path, home=home)
    assert again.returncode == 0, (
        again.stderr
    )  # a second check in the same second gets its own folder
    assert len(list((home / "bench").iterdir())) == 2
    helped = bench("check", "--help", cwd=tmp_path, home=home)
    assert "--agent-timeout" not in helped.stdout and "keel's home" in helped.stdout
