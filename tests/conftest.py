"""Shared pytest setup: offline litellm settings, the scripted model server and tool-context fixtures."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

# ---------------------------------------------------------------- environment (before litellm loads)


def _litellm_tokenizers_dir() -> str | None:
    """litellm's bundled tiktoken files, found without importing litellm (which is slow)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(
        Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    )


os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
_tokenizers = _litellm_tokenizers_dir()
if _tokenizers:
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", _tokenizers)

from keel.agent.harness.testing.scripted_server import ReplyLike, Responder, ScriptedServer
from keel.tools.base import ToolContext

# ---------------------------------------------------------------- the scripted model server


class StartScriptedServer(Protocol):
    def __call__(
        self, script: list[ReplyLike] | Responder = ..., **options: Any
    ) -> ScriptedServer: ...


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    """A tool context over an empty workspace, for the tool tests (a module may define its own)."""
    (tmp_path / "ws").mkdir()
    return ToolContext(root=tmp_path / "ws", scratch=tmp_path / "scratch")


@pytest.fixture
def scripted_server() -> Iterator[StartScriptedServer]:
    """Start scripted servers on 127.0.0.1: `scripted_server(["hi", Reply(...)], fail_rate=...)`.

    Each is stopped at teardown; a responder that raised fails the test there.
    """
    servers: list[ScriptedServer] = []

    def start(script: list[ReplyLike] | Responder = (), **options: Any) -> ScriptedServer:
        server = ScriptedServer(script=script, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
    errors = [error for server in servers for error in server.responder_errors]
    if errors:
        raise errors[0]


# ---------------------------------------------------------------- the embedded model


@pytest.fixture(scope="session", autouse=True)
def llama_cpp_stays_out_of_this_process() -> Iterator[None]:
    """llama.cpp runs in keel's model worker only: a native crash there must never take a test run down."""
    yield
    assert "llama_cpp" not in sys.modules, "a test loaded llama.cpp into the pytest process"


@pytest.fixture(scope="session")
def assembled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The embedded model assembled once from the real pieces (hashed once); the progress it reported."""
    from local_model_support import PIECES_INSTALLED

    from keel.agent.core.model.local.assemble import ensure_model_file
    from keel.agent.core.model.local.catalog import QWEN_05B

    if not PIECES_INSTALLED:
        pytest.skip("the model pieces are not installed (pip install -e '.[local-small]')")
    target = tmp_path_factory.mktemp("cache") / "models" / QWEN_05B.file
    messages: list[str] = []
    ensure_model_file(messages.append, target, QWEN_05B)
    return target, messages


@pytest.fixture(scope="session")
def assembled_default(assembled, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The model keel runs with nothing configured, assembled: the 0.5B that `.[test]` installs, or the 1.5B
    where `.[local]` is installed too (the README's first command), which then is the default."""
    from keel.agent.core.model.local.assemble import ensure_model_file
    from keel.agent.core.model.local.catalog import QWEN_05B, default_model

    model = default_model()
    if model is QWEN_05B:
        return assembled[0]
    target = tmp_path_factory.mktemp("default-cache") / "models" / model.file
    return ensure_model_file(target=target, model=model)


@pytest.fixture(scope="session")
def tiny_model(assembled, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny llama model with the embedded model's tokenizer (written in the pytest process: no llama.cpp)."""
    from tiny_gguf import write_tiny_gguf

    return write_tiny_gguf(tmp_path_factory.mktemp("tiny") / "tiny.gguf", assembled[0])


# ---------------------------------------------------------------- the TUI's tests


@pytest.fixture(scope="session")
def core_loaded() -> None:
    """The core and litellm loaded before any app starts, so Pilot's timeouts never race that import."""
    from keel.tui.warmup import warm_up_core

    warm_up_core()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """keel's home under tmp_path (KEEL_HOME)."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def calc_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository whose calc.py has add() subtract; keel's home under tmp_path."""
    from keel_cli import git_repo
    from tui_support import CALC

    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", CALC)
