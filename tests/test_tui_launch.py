"""How `keel` reaches its UI: the config's sources, the front end's entry point, settings built after the first paint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from keel_cli import git_repo

from keel.agent.cli.frontends import entry_point_in, load_frontend
from keel.agent.core.config_files import ConfigSources
from keel.agent.core.errors import ConfigError
from keel.agent.core.model.local.catalog import default_model


@pytest.fixture
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("KEEL_MODEL", raising=False)
    monkeypatch.delenv("KEEL_API_BASE", raising=False)


def test_the_repository_config_is_found_from_a_subdirectory(tmp_path, no_user_config):
    repo = git_repo(
        tmp_path / "repo", {".keel/config.toml": 'model = "openai/x"\n', "src/a.py": ""}
    )
    sources = ConfigSources.find(repo / "src", {})
    assert sources.files == [repo / ".keel" / "config.toml"] and not sources.plain
    assert sources.config().model == "openai/x"


def test_a_config_file_above_the_repository_is_not_its_config(tmp_path, no_user_config):
    (tmp_path / ".keel").mkdir()
    (tmp_path / ".keel" / "config.toml").write_text('model = "openai/outside"\n')
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    assert ConfigSources.find(repo, {}).files == []


def test_nothing_to_check_is_plain_and_anything_a_schema_can_reject_is_checked(
    tmp_path, no_user_config
):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    plain = ConfigSources.find(repo, {"model": "openai/any", "api_base": None})
    assert plain.plain and plain.model() == "openai/any" and plain.flags == {"model": "openai/any"}
    budget = ConfigSources.find(repo, {"budget": 0})
    assert not budget.plain
    with pytest.raises(ConfigError, match="bad value for --budget"):
        budget.check()
    (repo / ".keel").mkdir()
    (repo / ".keel" / "config.toml").write_text("modle = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'modle'"):
        ConfigSources.find(repo, {}).check()


def test_the_tui_is_found_in_keels_own_entry_points_without_scanning_them_all():
    code = (
        "import sys; from keel.agent.cli.frontends import load_frontend; f = load_frontend('tui'); "
        "print(f.__module__, f.__name__, 'importlib.metadata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["keel.tui.launch", "main", "False"], out.stderr
    assert load_frontend("no-such-frontend") is None


def test_entry_points_txt_is_read_by_section_and_name():
    text = "[console_scripts]\ntui = wrong:one\n\n[keel.frontends]\nweb = w:main\ntui = keel.tui.launch:main\n"
    assert entry_point_in(text, "keel.frontends", "tui") == "keel.tui.launch:main"
    assert entry_point_in(text, "keel.frontends", "acp") is None


FIRST_PAINT = """
import sys
from pathlib import Path
from keel.agent.core.config_files import ConfigSources
from keel.tui.launch import build_app

app = build_app(ConfigSources.find(Path.cwd(), {}), Path.cwd())
warm_up = app._start_warm_up

def painted():
    shown = app.pool.handles[0].stats.model
    before = [name for name in ("pydantic", "keel.agent.core.config", "litellm") if name in sys.modules]
    warm_up()  # builds the deferred settings first
    settings = app.pool.handles[0].settings
    print(shown, ",".join(before) or "-", type(settings).__name__, settings.model, settings.approval)
    app.exit()

app._start_warm_up = painted
app.run(headless=True, size=(100, 30))
"""


def in_fresh_repo(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh Python in a new repository, with nothing of keel's configured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEEL_")}
    env.update(KEEL_HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=git_repo(tmp_path / "repo", {"a.txt": "a\n"}),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_with_nothing_configured_the_first_paint_needs_no_pydantic(tmp_path):
    """The first session's settings are described for the first frame and built after it."""
    shown = in_fresh_repo(tmp_path, FIRST_PAINT)
    model = (
        default_model().model
    )  # the 0.5B of `.[test]`, or the 1.5B where `.[local]` is installed too
    assert shown.stdout.split() == [model, "-", "SessionSettings", model, "auto-edit"], shown.stderr


def test_a_broken_config_stops_the_tui_before_it_starts(tmp_path):
    """The contract of `keel run` holds for `keel` too: exit 2, one line naming the file and the key."""
    from keel_cli import run_keel

    repo = git_repo(tmp_path / "repo", {".keel/config.toml": 'approval = "yolo"\n'})
    result = run_keel(cwd=repo, home=tmp_path / "home", timeout=60)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert str(Path(repo) / ".keel" / "config.toml") in lines[0]
    assert "bad value for 'approval'" in lines[0]


def test_with_nothing_to_trust_the_launch_reads_no_config_model(tmp_path):
    """`keel` settles a repository's trust before its first frame; with no repository config there is
    nothing to read, and pydantic (a tenth of a second) stays unloaded."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from keel.agent.core.config_files import ConfigSources\n"
        "print(ConfigSources.find(Path.cwd(), {}).untrusted_keys(), 'pydantic' in sys.modules)"
    )
    shown = in_fresh_repo(tmp_path, code)
    assert shown.stdout.split() == ["[]", "False"], shown.stderr
