"""The layers (ARCHITECTURE.md), by folder: the core (agent/ but its front ends and harnesses, plus tools/ and
prompts/) imports neither; front ends and harnesses reach the core only through its public surface; harnesses
import no front end; and every folder installs under the one `keel` namespace."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The layers are folders: the core is agent/core/, with tools/ and prompts/.
FRONT_ENDS = ("agent/cli", "agent/acp", "tui")
HARNESSES = ("agent/harness",)
CORE = ("agent/core", "tools", "prompts")
# The core's public surface: its API package, the Session and its protocol, settings and config (config_files
# is the config's light half, read before the first paint), the typed errors, and the prompts' text helpers.
PUBLIC = (
    "keel.agent.core.api",
    "keel.agent.core.protocol",
    "keel.agent.core.session",
    "keel.agent.core.settings",
    "keel.agent.core.config",
    "keel.agent.core.config_files",
    "keel.agent.core.errors",
    "keel.prompts",
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


def within(folder: str, name: str) -> bool:
    """Whether a path (agent/cli/main.py) or module (keel.agent.cli.main) lies in a folder (agent/cli)."""
    dotted = "keel." + folder.replace("/", ".")
    return name in (folder, dotted) or name.startswith((f"{folder}/", f"{dotted}."))


def layer_of(name: str) -> str:
    """The layer of a repository path or a keel module: front end, harness, core, or outside (tests, bench)."""
    if any(within(folder, name) for folder in FRONT_ENDS):
        return "front end"
    if any(within(folder, name) for folder in HARNESSES):
        return "harness"
    return "core" if any(within(folder, name) for folder in CORE) else "outside"


def is_public(module: str) -> bool:
    """A module of the public surface, a name in one, or a package above one (`from keel.agent import x`)."""
    return any(
        module == public or module.startswith(f"{public}.") or public.startswith(f"{module}.")
        for public in PUBLIC
    )


def files_of(layer: str) -> list[Path]:
    """The Python files of a layer, found by their folders."""
    files = sorted(
        p for top in ("agent", "tools", "tui", "prompts") for p in (ROOT / top).rglob("*.py")
    )
    return [p for p in files if layer_of(p.relative_to(ROOT).as_posix()) == layer]


def imports_of_layers(path: Path, layers: set[str]) -> list[str]:
    """The modules of the given layers a file imports."""
    return sorted(
        n for n in imported_modules(path) if n.startswith("keel.") and layer_of(n) in layers
    )


def core_internals(path: Path) -> list[str]:
    """The modules of the core a file imports beyond its public surface."""
    return [n for n in imports_of_layers(path, {"core"}) if not is_public(n)]


def offenders(files: list[Path], check: Callable[[Path], list[str]]) -> dict[str, list[str]]:
    """The files a check finds something in, with what it found."""
    found = {str(path.relative_to(ROOT)): check(path) for path in files}
    return {file: names for file, names in found.items() if names}


def test_the_core_imports_no_front_end_and_no_harness():
    assert (
        offenders(files_of("core"), lambda p: imports_of_layers(p, {"front end", "harness"})) == {}
    )


def test_front_ends_and_harnesses_reach_the_core_only_through_its_public_surface():
    outside = files_of("front end") + files_of("harness")
    assert offenders(outside, core_internals) == {}


def test_harnesses_import_no_front_end():
    assert offenders(files_of("harness"), lambda p: imports_of_layers(p, {"front end"})) == {}


def test_the_check_sees_imports_inside_functions_and_from_packages(tmp_path):
    module = tmp_path / "lazy.py"
    module.write_text(
        "def later():\n    from keel.tui.app import KeelApp\n    from keel.agent import cli\n"
    )
    assert imports_of_layers(module, {"front end"}) == [
        "keel.agent.cli",
        "keel.tui.app",
        "keel.tui.app.KeelApp",
    ]


def test_the_public_surface_check_sees_internals_and_lets_the_api_through(tmp_path):
    module = tmp_path / "front.py"
    module.write_text(
        "from keel.agent.core import protocol\n"
        "from keel.agent.core.api import plan_undo\n"
        "from keel.agent.core.api.git import repo_top\n"
        "def later():\n"
        "    from keel.agent.core.model.local.endpoint import stop_workers\n"
        "    import keel.agent.core.git.checkpoints\n"
        "    from keel.tools import default_tools\n"
        "    from keel.agent.harness.batch.runner import run_batch\n"
    )
    assert core_internals(module) == [
        "keel.agent.core.git.checkpoints",
        "keel.agent.core.model.local.endpoint",
        "keel.agent.core.model.local.endpoint.stop_workers",
        "keel.tools",
        "keel.tools.default_tools",
    ]


def test_the_layers_are_folders_that_exist_and_cover_the_code():
    """A renamed folder would leave a check with nothing to check: every layer has its files, the public
    surface is in the core, and every module of agent/, tools/, tui/ and prompts/ is in some layer."""
    for folder in FRONT_ENDS + HARNESSES + CORE:
        assert (ROOT / folder).is_dir(), folder
    assert all(files_of(layer) for layer in ("core", "front end", "harness"))
    assert all(layer_of(public) == "core" for public in PUBLIC)
    layered = {p for layer in ("core", "front end", "harness") for p in files_of(layer)}
    every = {p for top in ("agent", "tools", "tui", "prompts") for p in (ROOT / top).rglob("*.py")}
    # the keel.agent package's own __init__ is only its docstring: it may sit above the layers' folders
    assert every - layered <= {ROOT / "agent/__init__.py"}
    assert layer_of("tui/app.py") == "front end" and layer_of("tests/test_x.py") == "outside"


# What a session runs with; agent/core/services.py alone builds them (the Session holds the result, the loop reads it).
SESSION_SERVICES = {
    "ModelClient",
    "RedactingModel",
    "ContextManager",
    "Summarizer",
    "Approvals",
    "CheckpointGuard",
    "AgentLoop",
}


def builds(path: Path, classes: set[str]) -> list[str]:
    """The given classes a module constructs (a call of the name or of x.name), with their lines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in classes:
                found.append(f"{name} at line {node.lineno}")
    return found


def test_a_sessions_services_are_assembled_in_one_place():
    assembly = ROOT / "agent/core/services.py"
    others = [p for p in files_of("core") if p != assembly]
    found = offenders(others, lambda p: builds(p, SESSION_SERVICES - {"AgentLoop"}))
    assert found == {}
    loops = offenders(others, lambda p: builds(p, {"AgentLoop"}))
    assert list(loops) == ["agent/core/session.py"] and len(loops["agent/core/session.py"]) == 1
    assert builds(assembly, SESSION_SERVICES - {"AgentLoop"})


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
    own = {ROOT / "agent/core/git/runner.py", ROOT / "agent/core/git/lock.py"}
    offenders = {
        str(path.relative_to(ROOT)): runs_git_or_locks(path)
        for package in ("agent", "tools")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path not in own and (ROOT / "agent/harness/testing") not in path.parents
    }
    # tools/ never imports the core: its two `git ls-files` listings stay its own
    allowed = {"tools/lint.py", "tools/codeintel/source_files.py"}
    assert {f: found for f, found in offenders.items() if found and f not in allowed} == {}
    assert runs_git_or_locks(ROOT / "agent/core/git/runner.py")
    assert runs_git_or_locks(ROOT / "agent/core/git/lock.py")


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
        "assert 'keel.agent.core.api' not in sys.modules\n"
        "missing = [n for n in keel.__all__ if getattr(keel, n, None) is None]\n"
        "print(missing, sorted(keel._PUBLIC) == sorted(set(keel.__all__) - {'__version__'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["[]", "True"], done.stderr


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def builds_a_llama(path: Path) -> list[int]:
    """Lines that build a llama_cpp.Llama: a call of Llama or x.Llama, or of Llama.from_pretrained (not
    transformers' from_pretrained of another class)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = _name(func)
            if name == "from_pretrained" and isinstance(func, ast.Attribute):
                name = _name(func.value)
            if name == "Llama":
                lines.append(node.lineno)
    return lines


def test_llama_cpp_is_loaded_only_the_amx_safe_way():
    """Every Llama keel, its tests or its benches build goes through llama_loading.build_llama: a Llama built
    with llama.cpp's default extra buffers crashes on Xeons with AMX (CI's machines among them)."""
    own = ROOT / "agent/core/model/local/llama_loading.py"
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
        f"e = llama_cpp.{cls}.from_pretrained('repo', 'file')\n"
        "f = AutoModelForCausalLM.from_pretrained('dir', gguf_file='m.gguf')\n"  # transformers'
    )
    assert builds_a_llama(module) == [3, 4, 5, 7]


# What the loop may not name: what differs by kind of model belongs to a strategy (agent/core/strategies/).
MODEL_SPECIFIC = re.compile(
    r"compact|small|profile|nudge|intent|asks_for|heuristic|whole_file|answer_request|asked_for_answer"
    r"|reply_reading|project_file|parallel_calls|temperature|qwen|llama",
    re.IGNORECASE,
)
STRATEGY_INTERFACE = ("keel.agent.core.strategies.base", "keel.agent.core.strategies.ending")


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
        if m.startswith("keel.agent.core.strategies") and not m.startswith(STRATEGY_INTERFACE)
    }
    found |= strategy_modules | {m for m in imported_modules(path) if MODEL_SPECIFIC.search(m)}
    return sorted(found)


def test_the_loop_holds_no_model_specific_branch():
    """The loop is the same for every model: limits, the model call, the strategy's reading of the reply, the
    tools, the end. A quirk of one kind of model goes in its strategy, never in agent/core/loop.py."""
    assert model_specific_names(ROOT / "agent/core/loop.py") == []


def test_the_model_specific_check_sees_a_quirk_in_a_loop(tmp_path):
    module = tmp_path / "loop.py"
    module.write_text(
        "from keel.agent.task_intent import asks_for_change\n"
        "from keel.agent.core.strategies.small import ASK_ANSWER_AT\n"
        "async def step(self, reply):\n"
        "    if self.profile.compact and asks_for_change(self.state.task_prompt):\n"
        "        await self.context.compact(reason='provider_overflow')\n"
        "    read_reply(reply, project_file_size=None)\n"
    )
    assert model_specific_names(module) == [
        "asks_for_change",
        "compact",
        "keel.agent.core.strategies.small",
        "keel.agent.core.strategies.small.ASK_ANSWER_AT",
        "keel.agent.task_intent",
        "keel.agent.task_intent.asks_for_change",
        "profile",
        "project_file_size",
    ]
