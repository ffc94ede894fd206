"""KeelAgent as Harbor loads and drives it; run by tests/test_harbor_agent.py in a Python >= 3.12 venv
with harbor==0.21.0 and keel. Reads a JSON request (argv[1]), prints a JSON report of what it saw."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from harbor.agents.factory import AgentFactory
from harbor.agents.installed.base import BaseInstalledAgent
from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext
from harbor.models.task.task import Task
from harbor.models.trial.config import AgentConfig
from harbor.utils.import_path import import_class

IMPORT_PATH = "keel.agent.harness.bench.harbor_agent:KeelAgent"


class RecordingEnvironment:
    """Stands in for Harbor's container (no Docker here): records what the agent runs and uploads."""

    default_user = "agent"

    def __init__(self, uploads: Path) -> None:
        self.calls: list[dict[str, Any]] = []
        self.uploads = uploads

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        self.calls.append({"exec": command, "user": user, "env": env or {}})
        stdout = "keel 0.1.0\n" if command.endswith("keel --version") else ""
        return ExecResult(stdout=stdout, return_code=0)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        kept = self.uploads / Path(target_path).name
        shutil.copy(source_path, kept)
        self.calls.append({"upload": target_path, "kept": str(kept)})


def loading(work: Path) -> dict[str, Any]:
    """(a) The class through Harbor's import-path loading, and the agent `harbor run -a …` would build."""
    cls = import_class(IMPORT_PATH, base=BaseInstalledAgent, label="agent")
    config = AgentConfig(
        import_path=IMPORT_PATH,
        model_name="openai/gpt-4o-mini",
        kwargs={"budget": 50000, "max_steps": 30, "api_base": "http://host:8000/v1?a=1&b=2"},
        env={"OPENAI_API_KEY": "sk-test"},
    )
    agent = AgentFactory.create_agent_from_config(config, logs_dir=work / "logs")
    environment = RecordingEnvironment(work / "uploads")
    environment.uploads.mkdir()

    async def drive() -> None:
        await agent.setup(environment)
        await agent.run("Fix the failing test.\n", environment, AgentContext())

    asyncio.run(drive())
    no_model = AgentFactory.create_agent_from_import_path(IMPORT_PATH, logs_dir=work / "logs2")
    try:
        no_model.run_command()
        missing_model = ""
    except ValueError as exc:
        missing_model = str(exc)
    return {
        "class": f"{cls.__module__}:{cls.__qualname__}",
        "name": agent.name(),
        "version": agent.version(),
        "agent_info": agent.to_agent_info().model_dump(mode="json"),
        "calls": environment.calls,
        "missing_model": missing_model,
    }


def shipped_wheel(sdist: Path, out: Path) -> list[str]:
    """The files of the wheel pip builds from the uploaded sdist (offline: setuptools is in the venv)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["-w", str(out), str(sdist)],
        check=True,
    )
    (wheel,) = out.glob("keel-*.whl")
    return zipfile.ZipFile(wheel).namelist()


def parsing(stream: Path, work: Path) -> dict[str, Any]:
    """(b) Real stream-json from keel, whole and cut short, into AgentContext."""
    from keel.agent.harness.bench.harbor_agent import STREAM, context_from_stream

    text = stream.read_text()
    cut = "".join(
        line for line in text.splitlines(keepends=True) if '"session.finished"' not in line
    )
    logs = work / "post-run"
    logs.mkdir()
    (logs / STREAM).write_text(text)
    agent = AgentFactory.create_agent_from_import_path(
        IMPORT_PATH, logs_dir=logs, model_name="openai/any"
    )
    context = AgentContext()
    agent.populate_context_post_run(context)
    return {
        "whole": context_from_stream(text).model_dump(mode="json"),
        "cut": context_from_stream(cut).model_dump(mode="json"),
        "noise": context_from_stream("not json\n[1]\n").model_dump(mode="json"),
        "post_run": context.model_dump(mode="json"),
    }


def tasks(task_dirs: list[str]) -> dict[str, Any]:
    """(c) Each task folder as Harbor's own Task loads it, or the error it raises."""
    loaded: dict[str, Any] = {}
    for folder in task_dirs:
        try:
            task = Task(folder)
            loaded[folder] = {
                "name": task.name,
                "instruction": task.instruction,
                "agent_timeout_sec": task.config.agent.timeout_sec,
                "dockerfile": (task.paths.environment_dir / "Dockerfile").is_file(),
                "test": str(task.paths.discovered_test_path_for(task.config.environment.os)),
            }
        except (OSError, ValueError) as exc:  # missing files, bad TOML, invalid config: a finding
            loaded[folder] = {"error": f"{type(exc).__name__}: {exc}"}
    return loaded


def main() -> None:
    request = json.loads(sys.argv[1])
    work = Path(request["work"])
    report = loading(work)
    sdist = next(
        Path(c["kept"]) for c in report["calls"] if c.get("upload", "").endswith(".tar.gz")
    )
    report["wheel"] = shipped_wheel(sdist, work / "wheel")
    report["parsing"] = parsing(Path(request["stream"]), work)
    report["tasks"] = tasks(request["tasks"])
    print(json.dumps(report))


if __name__ == "__main__":
    main()
