"""The pure parts of `keel bench`: the Dockerfile subset, task.toml, rewards, pass@k, the Pareto front."""

from __future__ import annotations

import pytest
from bench_support import make_task

from keel.agent.harness.bench.dockerfile import CopyStep, RunStep, Unsupported, parse_dockerfile
from keel.agent.harness.bench.report import pareto_front
from keel.agent.harness.bench.results import BenchRow, summarize
from keel.agent.harness.bench.task_config import TaskConfig
from keel.agent.harness.bench.tasks import TaskFolderError, find_tasks, load_task
from keel.agent.harness.bench.verifier import read_reward


def test_dockerfile_subset_becomes_copy_and_run_steps_in_the_workdir():
    recipe = parse_dockerfile(
        "# syntax=docker/dockerfile:1\nFROM python:3.11-slim AS base\nARG NAME=calc\n"
        "ENV PYTHONDONTWRITEBYTECODE=1 APP_HOME=/app\nWORKDIR $APP_HOME\n"
        "COPY app/ /app/\nCOPY ${NAME}.cfg ./conf/\n"
        'RUN python3 -m compileall -q . && \\\n    echo built > built.txt\nWORKDIR src\nRUN ["ls", "-la"]\n'
        'CMD ["python3"]\nEXPOSE 8000\n'
    )
    assert recipe.base_image == "python:3.11-slim"
    assert recipe.workdir == "/app"  # the folder that holds every step, not the last WORKDIR
    assert recipe.env == {"PYTHONDONTWRITEBYTECODE": "1", "APP_HOME": "/app"}
    copy1, copy2, run1, run2 = recipe.steps
    assert isinstance(copy1, CopyStep) and copy1.sources == ["app/"] and copy1.dest == "/app/"
    assert (
        isinstance(copy2, CopyStep) and copy2.sources == ["calc.cfg"] and copy2.dest == "/app/conf/"
    )
    assert (
        isinstance(run1, RunStep)
        and run1.cwd == "/app"
        and run1.command.endswith("echo built > built.txt")
    )
    assert isinstance(run2, RunStep) and run2.cwd == "/app/src" and run2.command == "ls -la"
    # the task's workdir overrides the Dockerfile's last WORKDIR
    assert parse_dockerfile("FROM x\nWORKDIR /app\nCOPY . .\n", workdir="/app").workdir == "/app"
    with pytest.raises(Unsupported, match="COPY to /opt/x, outside the workdir /app"):
        parse_dockerfile("FROM x\nWORKDIR /app\nCOPY x /opt/x\n", workdir="/app")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "FROM debian\nWORKDIR /app\nRUN apt-get update && apt-get install -y curl\n",
            "system packages",
        ),
        ("FROM a AS build\nWORKDIR /app\nFROM b\n", "multi-stage"),
        ("FROM a\nWORKDIR /app\nCOPY --from=build /out /app\n", "--from"),
        ("FROM a\nWORKDIR /app\nADD https://example.com/x.tgz /app/\n", "URL"),
        ("FROM a\nWORKDIR /app\nCOPY tool /usr/local/bin/tool\n", "no WORKDIR holds"),
        ("FROM a\nCOPY . .\n", "no WORKDIR holds"),
        ("FROM a\nWORKDIR /app\nFROBNICATE x\n", "FROBNICATE"),
    ],
)
def test_what_the_local_environment_cannot_build_says_why(text, says):
    with pytest.raises(Unsupported, match=says):
        parse_dockerfile(text)


def test_task_toml_keeps_unknown_keys_and_reads_harbor_fields(tmp_path):
    config = TaskConfig.model_validate(
        {
            "version": "1.0",
            "metadata": {"category": "feature", "tags": ["x"]},
            "verifier": {"timeout_sec": 30},
            "agent": {"timeout_sec": 60},
            "environment": {
                "build_timeout_sec": 10,
                "cpus": 2,
                "allow_internet": False,
                "gpu_types": ["h100"],
            },
            "future_table": {"a": 1},
        }
    )
    assert config.schema_version == "1.0" and config.category == "feature"
    assert config.verifier.timeout_sec == 30 and config.agent.timeout_sec == 60
    assert config.environment.network is False
    assert TaskConfig().environment.network is True  # Harbor's default is public
    assert (
        TaskConfig.model_validate(
            {"environment": {"network_mode": "no-network"}}
        ).environment.network
        is False
    )


def test_task_folders_are_found_and_bad_ones_named(tmp_path):
    suite = tmp_path / "suite"
    make_task(suite, "b-task")
    make_task(suite, "a-task")
    assert [task.id for task in find_tasks([suite])] == ["a-task", "b-task"]
    assert [task.id for task in find_tasks([suite / "b-task", suite])] == ["b-task", "a-task"]
    (suite / "a-task" / "task.toml").write_text("[verifier\n")
    with pytest.raises(TaskFolderError, match="not valid TOML"):
        load_task(suite / "a-task")
    (suite / "a-task" / "task.toml").write_text("[verifier]\ntimeout_sec = -1\n")
    with pytest.raises(TaskFolderError, match="verifier.timeout_sec"):
        load_task(suite / "a-task")
    with pytest.raises(TaskFolderError, match="no instruction.md"):
        load_task(tmp_path)
    with pytest.raises(TaskFolderError, match="holds no Harbor task"):
        find_tasks([tmp_path / "suite" / "b-task" / "environment"])


def test_reward_from_txt_or_json_and_a_clear_problem_otherwise(tmp_path):
    (tmp_path / "reward.json").write_text('{"reward": 0.5, "tests": 3}')
    assert read_reward(tmp_path) == 0.5
    (tmp_path / "reward.json").write_text('{"accuracy": 0.25}')
    assert read_reward(tmp_path) == 0.25
    (tmp_path / "reward.txt").write_text("1\n")
    assert read_reward(tmp_path) == 1.0  # reward.txt first, as Harbor reads it
    (tmp_path / "reward.txt").write_text("passed")
    with pytest.raises(ValueError, match="not a number"):
        read_reward(tmp_path)
    with pytest.raises(ValueError, match="wrote no"):
        read_reward(tmp_path / "none")


def _row(
    task: str, attempt: int, reward: float | None, tokens: int, status: str = "completed"
) -> BenchRow:
    return BenchRow(
        id=task, attempt=attempt, status=status, reward=reward, passed=reward == 1.0, tokens=tokens
    )


def test_summary_pass_at_k_by_hand():
    # t1: 5 attempts, 2 pass; t2: 5 attempts, none; t3 skipped (left out of the means)
    rows = [_row("t1", n, 1.0 if n in (2, 4) else 0.0, 100 * n) for n in range(1, 6)]
    rows += [_row("t2", n, 0.5, 1000) for n in range(1, 6)]
    rows += [_row("t3", 1, None, 0, status="skipped")]
    summary = summarize(rows, k=3)
    t1, t2, t3 = summary.tasks
    # pass@3 with n=5, c=2: 1 - C(3,3)/C(5,3) = 1 - 1/10
    assert t1.pass_at_1 == pytest.approx(0.4) and t1.pass_at_k == pytest.approx(0.9)
    assert t2.pass_at_1 == 0 and t2.pass_at_k == 0 and t2.mean_reward == 0.5
    assert t1.median_tokens == 300 and t2.median_tokens == 1000
    assert not t3.judged and summary.skipped_tasks == 1
    assert summary.pass_at_1 == pytest.approx(0.2) and summary.pass_at_k == pytest.approx(0.45)
    assert summary.mean_reward == pytest.approx((0.4 + 0.5) / 2)
    assert summary.median_tokens == pytest.approx(650)


def test_pareto_front_keeps_the_runs_nothing_beats():
    points = [(1000, 40), (500, 40), (2000, 70), (3000, 65), (200, 10)]
    assert pareto_front(points) == [4, 1, 2]
