"""One definition each: the model flags (keel, keel run, keel batch), the exit codes, and the run settings a
session takes from the config."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from keel_cli import keel_env

from keel.agent.cli.args import build_parser
from keel.agent.cli.flags import MODEL_FLAGS, config_flags
from keel.agent.core.config import (
    ApprovalPolicy,
    KeelConfig,
    RunSettings,
    ToolProtocol,
    resolve_config,
)
from keel.agent.core.errors import (
    ConfigError,
    ExitCode,
    KeelError,
    ProviderError,
    UsageError,
    exit_code_for,
)
from keel.agent.core.protocol import FinishStatus
from keel.agent.core.settings import SessionSettings, settings_from_config
from keel.tools.exec.sandbox_policy import SandboxMode


def model_group_flags(parser: argparse.ArgumentParser) -> list[str]:
    [group] = [g for g in parser._action_groups if g.title == "model"]
    return [action.option_strings[0] for action in group._group_actions]


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_keel_run_and_batch_offer_the_same_model_flags():
    parser = build_parser()
    commands = subcommands(parser)
    defined = [spec.flag for spec in MODEL_FLAGS]
    assert model_group_flags(parser) == defined
    assert model_group_flags(commands["run"]) == defined
    assert model_group_flags(commands["batch"]) == defined


def test_the_flags_choices_are_the_configs():
    choices = {spec.flag: spec.choices for spec in MODEL_FLAGS if spec.choices}
    assert choices == {
        "--tool-protocol": get_args(ToolProtocol),
        "--approval": get_args(ApprovalPolicy),
        "--sandbox": tuple(mode.value for mode in SandboxMode),
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["--sandbox", "read-only", "--allow-network", "--max-steps", "7", "run", "x"],
        ["run", "--sandbox", "read-only", "--allow-network", "--max-steps", "7", "x"],
        ["--max-steps", "7", "batch", "tasks.jsonl", "--sandbox", "read-only", "--allow-network"],
    ],
)
def test_flags_before_or_after_the_command_set_the_same_config(argv, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    config = resolve_config(tmp_path, config_flags(build_parser().parse_args(argv)))
    assert config.sandbox.mode is SandboxMode.READ_ONLY and config.sandbox.network is True
    assert config.max_steps == 7 and config.model is None


def test_a_table_no_flag_sets_leaves_the_config_files_one(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "config" / "keel").mkdir(parents=True)
    (tmp_path / "config" / "keel" / "config.toml").write_text('[sandbox]\nmode = "full-access"\n')
    flags = config_flags(build_parser().parse_args(["run", "x"]))
    assert flags["sandbox"] is None
    assert resolve_config(tmp_path, flags).sandbox.mode is SandboxMode.FULL_ACCESS


def test_every_way_a_task_ends_has_its_exit_code():
    assert {status: int(exit_code_for(status)) for status in get_args(FinishStatus)} == {
        "completed": 0,
        "error": 1,
        "budget_exhausted": 3,
        "max_steps": 3,
        "loop_detected": 3,
        "interrupted": 130,
    }


def test_the_exit_codes_are_designs():
    assert [int(code) for code in ExitCode] == [0, 1, 2, 3, 130, 141]
    assert ExitCode.of_signal(15) == 143
    assert (KeelError.exit_code, ProviderError.exit_code) == (ExitCode.FAILURE, ExitCode.FAILURE)
    assert UsageError.exit_code == ConfigError.exit_code == ExitCode.USAGE


def test_every_run_setting_of_the_config_reaches_the_session(tmp_path):
    changed = {
        "max_steps": 7,
        "budget": 1234,
        "auto_budget": False,
        "retries": 1,
        "retry_base_delay": 0.01,
        "request_timeout": 9.0,
        "stall_timeout": 7.0,
        "checkpoints": False,
        "record_tokens": True,
        "images": True,
        "test_command": "python3 -m pytest -q",
        "run_test_command": False,
        "context": {"summarize_at": 0.5, "keep_tool_outputs": 5},
        "sandbox": {"mode": "read-only", "network": True},
        "loop": {"max_corrections": 5, "nudge_without_change": "always"},
        "mcp_servers": {"docs": {"command": "docs-server", "read_only": True}},
        "hooks": {"PreToolUse": [{"matcher": "run_command", "command": "./check.sh"}]},
    }
    assert set(changed) == set(RunSettings.model_fields)
    config = KeelConfig.model_validate({"model": "openai/any", **changed})
    settings = settings_from_config(config, tmp_path, interactive=False)
    assert settings.model_dump(include=set(changed)) == config.model_dump(include=set(changed))
    assert settings.model_dump(include=set(changed)) != RunSettings().model_dump()


def test_session_settings_check_the_run_settings_as_the_config_does(tmp_path):
    with pytest.raises(ValueError, match="max_steps"):
        SessionSettings(cwd=tmp_path, model="openai/any", max_steps=0)
    with pytest.raises(ValueError, match="max_steps"):
        KeelConfig(max_steps=0)


def test_python_dash_m_keel_is_the_keel_command(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "keel", "run", "--budget", "nope", "x"],
        env=keel_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(tmp_path),
        check=False,
    )
    assert done.returncode == ExitCode.USAGE
    assert "--budget: invalid int value" in done.stderr
