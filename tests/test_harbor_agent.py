"""keel as a Harbor agent (agent/harness/bench/harbor_agent.py), checked with the real harbor==0.21.0 in a Python
>= 3.12 venv: Harbor's import-path loading, the commands it would run in a container (no Docker here: a
recording environment stands in), keel's real stream-json into AgentContext, and Harbor's Task loader on
every folder of bench/suite/ and on a tiny task made here.

The venv is made once and kept in .venv-harbor/ (gitignored), reused while its stamp matches: a cold
install (harbor and its dependencies, keel editable) takes 2–3 minutes."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from keel_cli import git_repo, run_streamed
from venv_support import stamped_venv

from keel.agent.harness.testing.scripted_server import (
    Reply,
    ScriptedServer,
    ScriptedToolCall,
    UsageOverride,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-harbor"
HARBOR = "harbor==0.21.0"
PROBE = Path(__file__).with_name("harbor_probe.py")
USAGES = [
    UsageOverride(prompt_tokens=1200, completion_tokens=30, cached_tokens=1000),
    UsageOverride(prompt_tokens=1500, completion_tokens=12, cached_tokens=1100),
]


def python_312() -> str | None:
    """A Python 3.12 for Harbor (>= 3.12; keel's python-ripgrep pin has no 3.13 wheel): $KEEL_HARBOR_PYTHON,
    python3.12 on PATH, or pyenv's."""
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python")))
    candidates = [
        os.environ.get("KEEL_HARBOR_PYTHON"),
        shutil.which("python3.12"),
        *reversed(pyenv),
    ]
    for candidate in filter(None, candidates):
        check = [candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"]
        if subprocess.run(check, capture_output=True, check=False).returncode == 0:
            return candidate
    return None


def stamp(python: str) -> dict[str, str]:
    """What the cached venv was made from; any change makes it again."""
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    pyproject = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return {"harbor": HARBOR, "python": version, "root": str(ROOT), "pyproject": pyproject}


@pytest.fixture(scope="module")
def harbor_venv() -> Path:
    """.venv-harbor's python, made (or reused) with harbor, setuptools and keel without extras."""
    python = python_312()
    if python is None:
        pytest.skip("Harbor needs Python >= 3.12 and none was found (set KEEL_HARBOR_PYTHON)")
    installs = [[HARBOR, "setuptools"], ["-e", str(ROOT)]]
    return stamped_venv(VENV, python, stamp(python), installs, HARBOR)


def write_task(folder: Path) -> Path:
    """A tiny task in Harbor's format."""
    files = {
        "instruction.md": "Create hello.txt containing the word hello.\n",
        "task.toml": 'schema_version = "1.4"\n\n[agent]\ntimeout_sec = 120.0\n\n'
        "[verifier]\ntimeout_sec = 60.0\n",
        "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
        "tests/test.sh": "#!/bin/bash\ngrep -q hello /app/hello.txt && echo 1 > "
        "/logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "#!/bin/bash\necho hello > /app/hello.txt\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def keel_stream(tmp: Path) -> Path:
    """Real stream-json from `keel run` with the flags the adapter passes, against the scripted server:
    one tool call, then an answer."""
    write = ScriptedToolCall(
        name="write_file", arguments={"path": "hello.txt", "content": "hello\n"}
    )
    script = [Reply(tool_calls=[write], usage=USAGES[0]), Reply(text="Done.", usage=USAGES[1])]
    git_repo(tmp / "repo", {"README.md": "a task\n"})
    (tmp / "instruction.md").write_text("make hello.txt\n")
    flags = ["--approval", "full-auto", "--sandbox", "full-access", "--budget", "100000"]
    with ScriptedServer(script=script) as server:
        done = run_streamed(
            server.url,
            "--prompt-file",
            str(tmp / "instruction.md"),
            *flags,
            cwd=tmp / "repo",
            home=tmp / "home",
        )
    assert done.returncode == 0, done.stderr
    assert (tmp / "repo" / "hello.txt").read_text() == "hello\n"
    stream = tmp / "keel.jsonl"
    stream.write_text(done.stdout)
    return stream


@pytest.fixture(scope="module")
def report(harbor_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("harbor")
    suite = sorted(str(p) for p in (ROOT / "bench" / "suite").glob("*") if p.is_dir())
    request = {
        "work": str(tmp / "work"),
        "stream": str(keel_stream(tmp)),
        "tasks": [str(write_task(tmp / "tiny-task")), *suite],
    }
    (tmp / "work").mkdir()
    done = subprocess.run(
        [str(harbor_venv), str(PROBE), json.dumps(request)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith(("KEEL_", "OPENAI_"))},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    result["stream"] = [
        json.loads(line) for line in Path(request["stream"]).read_text().splitlines()
    ]
    return result


def test_harbor_loads_keel_by_import_path(report: dict[str, Any]) -> None:
    import keel

    assert report["class"] == "keel.agent.harness.bench.harbor_agent:KeelAgent"
    assert report["name"] == "keel"
    assert report["version"] == keel.__version__
    assert report["agent_info"]["model_info"] == {"name": "gpt-4o-mini", "provider": "openai"}


def test_setup_ships_this_checkout_and_installs_it_in_its_own_venv(report: dict[str, Any]) -> None:
    calls = report["calls"]
    (sdist,) = [c for c in calls if c.get("upload", "").endswith(".tar.gz")]
    assert sdist["upload"] == "/installed-agent/keel-0.1.0.tar.gz"
    (install,) = [c for c in calls if "uv pip install" in c.get("exec", "")]
    assert install["user"] == "root"
    assert "uv venv --python 3.12 /opt/keel/venv" in install["exec"]
    assert (
        "--python /opt/keel/venv/bin/python /installed-agent/keel-0.1.0.tar.gz" in install["exec"]
    )
    assert calls.index(sdist) < calls.index(install)
    # the sdist pip builds in the container holds the code and the prompts, and no tests
    wheel = report["wheel"]
    assert "keel/agent/harness/bench/harbor_agent.py" in wheel
    assert any(n.startswith("keel/prompts/") and n.endswith(".j2") for n in wheel)
    assert not any(n.startswith(("keel/tests/", "tests/")) for n in wheel)


def test_run_is_headless_full_access_with_the_model_and_its_key(report: dict[str, Any]) -> None:
    calls = report["calls"]
    (instruction,) = [c for c in calls if c.get("upload", "").endswith(".md")]
    assert instruction["upload"] == "/installed-agent/keel-instruction.md"
    assert Path(instruction["kept"]).read_text() == "Fix the failing test.\n"
    (run,) = [c for c in calls if " run --prompt-file" in c.get("exec", "")]
    command = run["exec"]
    assert command.startswith(  # Harbor puts `set -o pipefail` before every command
        "set -o pipefail; /opt/keel/venv/bin/keel run --prompt-file /installed-agent/keel-instruction.md "
        "--output-format stream-json --model openai/gpt-4o-mini --approval full-auto "
        "--sandbox full-access "
    )
    assert "--api-base 'http://host:8000/v1?a=1&b=2' --budget 50000 --max-steps 30" in command
    assert "| tee /logs/agent/keel.jsonl" in command
    assert run["user"] is None  # Harbor's default user for the agent
    assert run["env"]["OPENAI_API_KEY"] == "sk-test"
    assert run["env"]["KEEL_HOME"] == "/logs/agent/keel-home"
    assert "-m PROVIDER/MODEL" in report["missing_model"]


def test_the_run_command_treats_a_budget_stop_as_finished(report: dict[str, Any]) -> None:
    (run,) = [c for c in report["calls"] if " run --prompt-file" in c.get("exec", "")]
    script = run["exec"].split(" | tee /logs/agent/keel.jsonl", 1)[1]
    for rc, expected in ((0, 0), (3, 0), (1, 1), (2, 2)):
        shell = f"set -o pipefail; (exit {rc}) | cat{script}"
        done = subprocess.run(["bash", "-c", shell], capture_output=True, check=False)
        assert done.returncode == expected


def test_keel_stream_json_becomes_harbor_agent_context(report: dict[str, Any]) -> None:
    finished = report["stream"][-1]
    assert finished["type"] == "session.finished"
    assert finished["usage"]["prompt_tokens"] == sum(u.prompt_tokens or 0 for u in USAGES)
    expected = {
        "n_input_tokens": 2700,
        "n_cache_tokens": 2100,
        "n_output_tokens": 42,
        "cost_usd": finished["cost"],
    }
    parsed = report["parsing"]
    for context in (parsed["whole"], parsed["post_run"]):
        assert {k: context[k] for k in expected} == expected
        assert context["metadata"]["status"] == "completed"
        assert context["metadata"]["steps"] == finished["steps"]
        assert context["metadata"]["final_message"] == "Done."
    # cut short by Harbor's timeout: the last running totals stand in, and there is no status
    cut = parsed["cut"]
    assert {k: cut[k] for k in ("n_input_tokens", "n_cache_tokens", "n_output_tokens")} == {
        "n_input_tokens": 2700,
        "n_cache_tokens": 2100,
        "n_output_tokens": 42,
    }
    assert "status" not in cut["metadata"]
    assert parsed["noise"]["n_input_tokens"] is None


def test_harbor_loads_the_task_folders(report: dict[str, Any]) -> None:
    loaded = report["tasks"]
    broken = {folder: task["error"] for folder, task in loaded.items() if "error" in task}
    assert broken == {}
    shipped = [folder for folder in loaded if folder.startswith(str(ROOT / "bench" / "suite"))]
    assert len(shipped) >= 24  # the whole shipped suite loads with Harbor's own Task
    (tiny,) = [task for folder, task in loaded.items() if folder.endswith("tiny-task")]
    assert tiny["name"] == "tiny-task"
    assert tiny["instruction"] == "Create hello.txt containing the word hello.\n"
    assert tiny["agent_timeout_sec"] == 120.0
    assert tiny["dockerfile"]
    assert tiny["test"].endswith("tests/test.sh")
