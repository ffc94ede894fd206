"""The layering DESIGN.md fixes: the core (agent/ but its CLI and ACP front ends) and the tools import neither
the terminal UI nor the CLI or ACP front ends, the terminal UI reaches the core only through its public surface, and every folder installs
under the one `keel` namespace."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FRONT_ENDS = ("keel.tui", "keel.agent.cli", "keel.agent.acp")
# What a front end may import of the core: the public API, the Session and its protocol, settings and config
# (config_files is the config's light half, read before the first paint), and the typed errors it catches.
PUBLIC_CORE = (
    "keel.agent.api",
    "keel.agent.protocol",
    "keel.agent.session",
    "keel.agent.settings",
    "keel.agent.config",
    "keel.agent.config_files",
    "keel.agent.errors",
)


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function (`from a import b` counts a and a.b)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return modules


def front_end_imports(path: Path) -> list[str]:
    names = imported_modules(path)
    return sorted(n for n in names if any(n == f or n.startswith(f"{f}.") for f in FRONT_ENDS))


def core_internals(path: Path) -> list[str]:
    """The modules of the core (agent/, tools/) a file imports beyond PUBLIC_CORE."""
    return sorted(
        name
        for name in imported_modules(path)
        if name.startswith(("keel.agent.", "keel.tools.")) or name == "keel.tools"
        if not any(name == public or name.startswith(f"{public}.") for public in PUBLIC_CORE)
    )


def core_files() -> list[Path]:
    files = [
        p
        for package in ("agent", "tools", "prompts")
        for p in sorted((ROOT / package).rglob("*.py"))
    ]
    front_ends = (ROOT / "agent" / "cli", ROOT / "agent" / "acp")
    return [p for p in files if not any(folder in p.parents for folder in front_ends)]


def test_the_core_and_the_tools_never_import_a_front_end():
    offenders = {str(path.relative_to(ROOT)): front_end_imports(path) for path in core_files()}
    assert {file: names for file, names in offenders.items() if names} == {}


def test_the_check_sees_imports_inside_functions_and_from_packages(tmp_path):
    module = tmp_path / "lazy.py"
    module.write_text(
        "def later():\n    from keel.tui.app import KeelApp\n    from keel.agent import cli\n"
    )
    assert front_end_imports(module) == ["keel.agent.cli", "keel.tui.app", "keel.tui.app.KeelApp"]


def test_the_terminal_ui_reaches_the_core_only_through_its_public_surface():
    offenders = {
        str(path.relative_to(ROOT)): core_internals(path)
        for path in sorted(ROOT.glob("tui/**/*.py"))
    }
    assert {file: names for file, names in offenders.items() if names} == {}


def test_the_public_surface_check_sees_internals_and_lets_the_api_through(tmp_path):
    module = tmp_path / "front.py"
    module.write_text(
        "from keel.agent import protocol\n"
        "from keel.agent.api import plan_undo\n"
        "def later():\n"
        "    from keel.agent.model.local.endpoint import stop_workers\n"
        "    import keel.agent.git.checkpoints\n"
        "    from keel.tools import default_tools\n"
    )
    assert core_internals(module) == [
        "keel.agent.git.checkpoints",
        "keel.agent.model.local.endpoint",
        "keel.agent.model.local.endpoint.stop_workers",
        "keel.tools",
        "keel.tools.default_tools",
    ]


def test_the_check_covers_the_whole_core():
    covered = {str(p.relative_to(ROOT)) for p in core_files()}
    assert {
        "agent/loop.py",
        "agent/model/local/worker.py",
        "tools/exec/sandbox.py",
        "prompts/__init__.py",
    } <= covered
    assert not any(name.startswith(("agent/cli/", "agent/acp/")) for name in covered)


def test_every_folder_installs_under_the_keel_namespace():
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        "keel." + ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("agent", "tools", "tui", "prompts")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert listed == found | {"keel"}


@pytest.mark.parametrize("package", ["agent", "tools", "tui", "prompts"])
def test_no_module_imports_a_top_level_name_the_install_does_not_have(package):
    stale = {
        str(path.relative_to(ROOT)): sorted(
            n
            for n in imported_modules(path)
            if n.split(".")[0] in {"agent", "tools", "tui", "prompts"}
        )
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {file: names for file, names in stale.items() if names} == {}


SPAWNS = {"run", "Popen", "check_output", "check_call", "call", "create_subprocess_exec", "execute"}


def runs_git_or_locks(path: Path) -> list[str]:
    """`git` as a command (the first word of an argv list, or of a process-spawning call) and `flock` calls."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        words: list[ast.expr] = []
        if isinstance(node, (ast.List, ast.Tuple)):
            words = node.elts[:1]
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            words = node.args[:1] if name in SPAWNS else []
        if any(isinstance(w, ast.Constant) and w.value == "git" for w in words):
            found.append((node.lineno, "runs git"))
        if isinstance(node, ast.Attribute) and node.attr == "flock":
            found.append((node.lineno, "flock"))
    return [f"{what} at line {line}" for line, what in sorted(found)]


def test_git_runs_through_one_runner_and_locks_through_one_helper():
    own = {ROOT / "agent" / "git" / "runner.py", ROOT / "agent" / "git" / "lock.py"}
    offenders = {
        str(path.relative_to(ROOT)): runs_git_or_locks(path)
        for package in ("agent", "tools")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path not in own and (ROOT / "agent" / "testing") not in path.parents
    }
    # tools/ never imports the core: its two `git ls-files` listings stay its own
    allowed = {"tools/lint.py", "tools/codeintel/source_files.py"}
    assert {f: found for f, found in offenders.items() if found and f not in allowed} == {}
    assert runs_git_or_locks(ROOT / "agent" / "git" / "runner.py")
    assert runs_git_or_locks(ROOT / "agent" / "git" / "lock.py")


def test_the_git_check_sees_argv_lists_calls_and_flock(tmp_path):
    module = tmp_path / "sneaky.py"
    module.write_text(
        "import fcntl, subprocess, asyncio\n"
        "subprocess.run(['git', 'status'])\n"
        "asyncio.create_subprocess_exec('git', 'ls-files')\n"
        "fcntl.flock(3, fcntl.LOCK_EX)\n"
        "print('git')\n"
    )
    assert runs_git_or_locks(module) == [
        "runs git at line 2",
        "runs git at line 3",
        "flock at line 4",
    ]


def test_import_keel_offers_every_public_name_and_loads_it_only_when_asked():
    probe = (
        "import sys, keel\n"
        "assert 'keel.agent.api' not in sys.modules\n"
        "missing = [n for n in keel.__all__ if getattr(keel, n, None) is None]\n"
        "print(missing, sorted(keel._PUBLIC) == sorted(set(keel.__all__) - {'__version__'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["[]", "True"], done.stderr


LLAMA_BUILDERS = {"Llama", "from_pretrained"}


def builds_a_llama(path: Path) -> list[int]:
    """Lines that build a llama_cpp.Llama: a call of Llama or x.Llama, or of Llama.from_pretrained."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in LLAMA_BUILDERS:
                lines.append(node.lineno)
    return lines


def test_llama_cpp_is_loaded_only_the_amx_safe_way():
    """Every Llama keel, its tests or its benches build goes through llama_loading.build_llama: a Llama built
    with llama.cpp's default extra buffers crashes on Xeons with AMX (CI's machines among them)."""
    own = ROOT / "agent" / "model" / "local" / "llama_loading.py"
    offenders = {
        str(path.relative_to(ROOT)): found
        for package in ("agent", "tools", "tui", "tests", "bench")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != own and "suite" not in path.relative_to(ROOT).parts
        if (found := builds_a_llama(path))
    }
    assert offenders == {}
    assert builds_a_llama(own)


def test_the_llama_check_sees_every_way_to_build_one(tmp_path):
    module = tmp_path / "probe.py"
    cls = "Llama"  # spelled apart so that a grep for built Llamas does not find this test
    module.write_text(
        f"import llama_cpp\nfrom llama_cpp import {cls}\n"
        f"a = {cls}(model_path='m')\n"
        f"b = llama_cpp.{cls}(model_path='m')\n"
        f"c = {cls}.from_pretrained('repo', 'file')\n"
        f"d = {cls}.logits_to_logprobs([])\n"
    )
    assert builds_a_llama(module) == [3, 4, 5]


# What the loop may not name: what differs by kind of model belongs to a strategy (agent/strategies/).
MODEL_SPECIFIC = re.compile(
    r"compact|small|profile|nudge|intent|asks_for|heuristic|whole_file|answer_request|asked_for_answer"
    r"|reply_reading|project_file|parallel_calls|temperature|qwen|llama",
    re.IGNORECASE,
)
STRATEGY_INTERFACE = ("keel.agent.strategies.base", "keel.agent.strategies.ending")


def model_specific_names(path: Path) -> list[str]:
    """The identifiers and imports of a module that name something model-specific (the context manager's
    `compact`, which summarizes the context, aside), and any strategy module it imports but the interface."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            context = isinstance(node.value, ast.Attribute) and node.value.attr == "context"
            names = [] if context and node.attr == "compact" else [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.arg, ast.keyword)):
            names = [node.arg] if node.arg else []
        found.update(name for name in names if MODEL_SPECIFIC.search(name))
    strategy_modules = {
        m
        for m in imported_modules(path)
        if m.startswith("keel.agent.strategies") and not m.startswith(STRATEGY_INTERFACE)
    }
    found |= strategy_modules | {m for m in imported_modules(path) if MODEL_SPECIFIC.search(m)}
    return sorted(found)


def test_the_loop_holds_no_model_specific_branch():
    """The loop is the same for every model: limits, the model call, the strategy's reading of the reply, the
    tools, the end. A quirk of one kind of model goes in its strategy, never in agent/loop.py."""
    assert model_specific_names(ROOT / "agent" / "loop.py") == []


def test_the_model_specific_check_sees_a_quirk_in_a_loop(tmp_path):
    module = tmp_path / "loop.py"
    module.write_text(
        "from keel.agent.task_intent import asks_for_change\n"
        "from keel.agent.strategies.small import ASK_ANSWER_AT\n"
        "async def step(self, reply):\n"
        "    if self.profile.compact and asks_for_change(self.state.task_prompt):\n"
        "        await self.context.compact(reason='provider_overflow')\n"
        "    read_reply(reply, project_file_size=None)\n"
    )
    assert model_specific_names(module) == [
        "asks_for_change",
        "compact",
        "keel.agent.strategies.small",
        "keel.agent.strategies.small.ASK_ANSWER_AT",
        "keel.agent.task_intent",
        "keel.agent.task_intent.asks_for_change",
        "profile",
        "project_file_size",
    ]
