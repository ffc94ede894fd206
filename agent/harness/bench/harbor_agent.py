"""keel as a Harbor agent: `harbor run -a keel.agent.harness.bench.harbor_agent:KeelAgent -m MODEL …`.

Imported only by Harbor (Python >= 3.12, `harbor` installed); nothing in keel imports it.

Install: keel is not on PyPI, so the adapter ships the keel it is imported from — the checkout of the
imported `keel` package, packed as an sdist — and installs it in the container with `uv pip`, into its
own venv under /opt/keel on a uv-managed Python 3.12. The venv keeps keel's pinned dependencies out of
the task's own Python (its tests may import the same packages), and uv's Python makes keel independent
of whatever Python (if any) the task image has. `install_spec` (`--ak install_spec=…`, or
KEEL_INSTALL_SPEC) names another source: a wheel, an sdist or a checkout on this machine (uploaded),
or a pip requirement such as `git+https://…` (installed from the container's network).
"""

from __future__ import annotations

import json
import shlex
import tarfile
import tempfile
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from harbor.agents.installed.base import BaseInstalledAgent, CliFlag, with_prompt_template
from harbor.agents.model_connection import ModelConnectionSpec
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

import keel

PREFIX = "/opt/keel"
KEEL = f"{PREFIX}/venv/bin/keel"
UV_VERSION = "0.7.13"
PYTHON = "3.12"
INSTRUCTION = "/installed-agent/keel-instruction.md"
STREAM = "keel.jsonl"  # in the agent's log dir: /logs/agent in the container, logs_dir on the host
STDERR = "keel.stderr.txt"
SKIPPED_TOP = {"tests", "bench", "build", "dist"}
BUDGET_STOP = 3  # keel's exit code for a run stopped by its budget or step limit
CONTEXT_FIELDS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd", "metadata")
NO_SOURCE = (
    "keel is installed here from a wheel, not a checkout, so there is no source to ship: name one "
    "with --ak install_spec=… or KEEL_INSTALL_SPEC (a wheel, an sdist, a checkout, or a pip "
    "requirement such as git+https://…)"
)


def keel_checkout() -> Path | None:
    """The checkout the imported keel runs from (a source or editable install), or None (a wheel install)."""
    root = Path(keel.__file__).resolve().parent
    return root if (root / "pyproject.toml").is_file() else None


def pack_source(root: Path, dest: Path) -> Path:
    """An sdist of a keel checkout: what pip needs to build it, without VCS, venvs, caches or tests."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    name = f"{project['name']}-{project['version']}"

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = PurePosixPath(info.name).parts[1:]
        if any(p.startswith(".") or p == "__pycache__" or p.endswith(".egg-info") for p in parts):
            return None
        if (len(parts) == 1 and parts[0] in SKIPPED_TOP) or info.name.endswith((".pyc", ".pyo")):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    archive = dest / f"{name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=name, filter=keep)
    return archive


def install_source(spec: str | None, staging: Path) -> tuple[Path | None, str]:
    """What to upload (None: nothing) and what pip installs, from `install_spec` or the imported keel."""
    if spec is None:
        root = keel_checkout()
        if root is None:
            raise ValueError(NO_SOURCE)
        archive = pack_source(root, staging)
    elif (path := Path(spec).expanduser()).is_dir():
        archive = pack_source(path.resolve(), staging)
    elif path.is_file():
        archive = path.resolve()
    else:
        return None, spec
    return archive, f"/installed-agent/{archive.name}"


def install_script(requirement: str) -> str:
    """The shell (as root) that installs uv, Python and keel under PREFIX, readable by any user."""
    uv = f"{PREFIX}/bin/uv"
    return "; ".join(
        [
            "set -euo pipefail",
            f"mkdir -p {PREFIX}/bin",
            (
                f"if [ ! -x {uv} ]; then curl -LsSf https://astral.sh/uv/{UV_VERSION}/install.sh"
                f" | env UV_INSTALL_DIR={PREFIX}/bin UV_NO_MODIFY_PATH=1 sh; fi"
            ),
            f"export UV_PYTHON_INSTALL_DIR={PREFIX}/python",
            f"{uv} venv --python {PYTHON} {PREFIX}/venv",
            f"{uv} pip install --python {PREFIX}/venv/bin/python {shlex.quote(requirement)}",
            f"chmod -R a+rX {PREFIX}",
            f"{KEEL} --version",
        ]
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def context_from_stream(text: str) -> AgentContext:
    """Harbor's AgentContext from keel's stream-json: tokens and cost of the run, its status in metadata.

    `session.finished` has the totals; a run cut short (Harbor's timeout) has none, so the last
    `budget.updated` or `assistant.message` totals stand in, and the per-call costs are summed."""
    usage: dict[str, Any] = {}
    cost = 0.0
    costed = False
    metadata: dict[str, Any] = {}
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "session.started":
            metadata["session_id"] = event.get("session_id")
            metadata["model"] = event.get("model")
        elif kind in ("budget.updated", "assistant.message"):
            usage = event.get("session_usage") or usage
            if kind == "assistant.message" and isinstance(event.get("cost"), (int, float)):
                cost, costed = cost + event["cost"], True
        elif kind == "session.finished":
            usage = event.get("usage") or usage
            if isinstance(event.get("cost"), (int, float)):
                cost, costed = float(event["cost"]), True
            metadata.update(
                status=event.get("status"),
                steps=event.get("steps"),
                reason=event.get("reason", ""),
                final_message=event.get("final_message", ""),
            )
    if not usage:
        return AgentContext(metadata=metadata or None)
    return AgentContext(
        n_input_tokens=_int(usage.get("prompt_tokens")),
        n_cache_tokens=_int(usage.get("cached_tokens")),
        n_output_tokens=_int(usage.get("completion_tokens")),
        cost_usd=cost if costed else None,
        metadata=metadata or None,
    )


class KeelAgent(BaseInstalledAgent):
    """keel installed in the task's container and run headless there: the container is the sandbox."""

    # the provider's key and base-URL variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, …) pass as named:
    # keel reads them through litellm, as they are
    MODEL_CONNECTION = ModelConnectionSpec(passthrough=True)

    CLI_FLAGS: ClassVar[list[CliFlag]] = [
        CliFlag("api_base", cli="--api-base", type="str", env_fallback="KEEL_API_BASE"),
        CliFlag("budget", cli="--budget", type="int"),
        CliFlag("max_steps", cli="--max-steps", type="int"),
        CliFlag("context_window", cli="--context-window", type="int"),
        CliFlag(
            "tool_protocol",
            cli="--tool-protocol",
            type="enum",
            choices=["auto", "native", "text"],
        ),
    ]

    def __init__(self, *args: Any, install_spec: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._install_spec = install_spec or self._get_env("KEEL_INSTALL_SPEC") or None
        if self._install_spec is None:
            if keel_checkout() is None:  # say so before any container starts
                raise ValueError(NO_SOURCE)
            self._version = self.version() or keel.__version__  # the very keel that will be shipped

    @staticmethod
    def name() -> str:
        return "keel"

    def get_version_command(self) -> str | None:
        return f"{KEEL} --version"

    def parse_version(self, stdout: str) -> str:
        return stdout.strip().removeprefix("keel").strip()

    def build_cli_flags(self) -> str:
        """keel's flags from the agent's kwargs, each value shell-quoted (a URL may hold `&`)."""
        parts: list[str] = []
        for flag in self.CLI_FLAGS:
            value = self._resolved_flags.get(flag.kwarg)
            if value is not None:
                parts += [flag.cli, shlex.quote(str(value))]
        return " ".join(parts)

    def run_command(self) -> str:
        """The shell that runs keel on the uploaded instruction; a budget or step-limit stop is a finished
        run (the verifier judges what it did), any other failure shows keel's stderr to Harbor."""
        if not self.model_name:
            raise ValueError("keel needs a model: harbor run … -m PROVIDER/MODEL")
        log = PurePosixPath("/logs/agent")
        flags = self.build_cli_flags()
        keel_run = " ".join(
            [
                KEEL,
                "run",
                f"--prompt-file {INSTRUCTION}",
                "--output-format stream-json",
                f"--model {shlex.quote(self.model_name)}",
                "--approval full-auto",
                "--sandbox full-access",
                *([flags] if flags else []),
            ]
        )
        return (
            f"{keel_run} </dev/null 2>{log / STDERR} | tee {log / STREAM}; rc=$?; "
            f'if [ "$rc" -ne 0 ]; then cat {log / STDERR} >&2; fi; '
            f'if [ "$rc" -eq {BUDGET_STOP} ]; then exit 0; fi; exit "$rc"'
        )

    def run_env(self) -> dict[str, str]:
        """The model's key and base URL, and KEEL_HOME in the log dir so the session log comes back."""
        env = dict(self.model_connection.env)
        env["KEEL_HOME"] = "/logs/agent/keel-home"
        return env

    async def install(self, environment: BaseEnvironment) -> None:
        await self.ensure_system_dependencies(environment, ("curl", "git"))
        with tempfile.TemporaryDirectory(prefix="keel-harbor-") as staging:
            upload, requirement = install_source(self._install_spec, Path(staging))
            if upload is not None:
                await environment.upload_file(upload, requirement)
            await self.exec_as_root(environment, command=install_script(requirement))

    def populate_context_post_run(self, context: AgentContext) -> None:
        stream = self.logs_dir / STREAM
        if not stream.is_file():
            self.logger.debug(f"no keel stream-json at {stream}")
            return
        parsed = context_from_stream(stream.read_text(errors="replace"))
        for field in CONTEXT_FIELDS:
            setattr(context, field, getattr(parsed, field))

    @with_prompt_template
    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        with tempfile.TemporaryDirectory(prefix="keel-harbor-") as staging:
            local = Path(staging) / "instruction.md"
            local.write_text(instruction)
            await environment.upload_file(local, INSTRUCTION)
        await self.exec_as_root(environment, command=f"chmod 644 {INSTRUCTION}")
        await self.exec_as_agent(environment, command=self.run_command(), env=self.run_env())
