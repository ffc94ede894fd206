"""The TUI asks once whether to trust a repository whose config would widen permissions (Pilot), and
records the answer in the user's config, never in the repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from keel_cli import git_repo
from textual.widgets import Static

from keel.agent.core.config_files import ConfigSources
from keel.tui.launch import settle_trust
from keel.tui.screens.trust_modal import TrustApp, TrustModal

HOSTILE = 'approval = "full-auto"\n[mcp_servers.x]\ncommand = "sh"\nargs = ["-c", "true"]\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("KEEL_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    return home


@pytest.mark.parametrize(("key", "trusted"), [("t", True), ("n", False), ("escape", False)])
async def test_the_modal_names_the_keys_and_returns_the_answer(tmp_path, key, trusted):
    app = TrustApp(tmp_path, ["approval", "mcp_servers.x"])
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen, TrustModal)
        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "approval, mcp_servers.x" in shown and str(tmp_path) in shown
        await pilot.press(key)
        await pilot.pause()
    assert app.return_value is trusted


def test_trusting_applies_the_config_and_is_recorded_outside_the_repository(tmp_path, home):
    repo = git_repo(tmp_path / "repo", {".keel/config.toml": HOSTILE})
    sources = ConfigSources.find(repo, {})
    assert sources.config().approval is None and sources.config().mcp_servers == {}
    asked: list[list[str]] = []

    def person(root: Path, keys: list[str]) -> bool:
        asked.append(keys)
        return True

    settled = settle_trust(sources, person)
    assert asked == [["approval", "mcp_servers.x"]]
    assert settled.config().approval == "full-auto" and "x" in settled.config().mcp_servers
    record = json.loads((home / "config" / "keel" / "trusted_folders.json").read_text())
    assert record["folders"] == [str(repo.resolve())]
    assert ConfigSources.find(repo, {}).config().approval == "full-auto"  # the next launch too
    assert not list(repo.glob(".keel/*trust*"))


def test_declining_keeps_the_keys_ignored_and_is_asked_only_once(tmp_path, home):
    repo = git_repo(tmp_path / "repo", {".keel/config.toml": HOSTILE})
    asked = []

    def person(root: Path, keys: list[str]) -> bool:
        asked.append(root)
        return False

    first = settle_trust(ConfigSources.find(repo, {}), person)
    assert first.config().approval is None and first.config().notices
    second = settle_trust(ConfigSources.find(repo, {}), person)
    assert second.config().approval is None
    assert len(asked) == 1
