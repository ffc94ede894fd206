"""Where one launch's configuration comes from, found without pydantic: the files, the environment, the flags.

The TUI paints before pydantic loads: with no config file and only free-text flags nothing can be
invalid, so the KeelConfig is built after the first frame; otherwise it is built (and a broken
file reported, exit 2) before the UI takes the screen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keel.agent.core.config import KeelConfig

FREE_TEXT = frozenset({"model", "api_base"})  # flags no schema can reject


def keel_home() -> Path:
    """Where keel keeps sessions and caches: $KEEL_HOME, else the platform's user data dir."""
    if env := os.environ.get("KEEL_HOME"):
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("keel", appauthor=False))


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "keel" / "config.toml"


def repo_root(cwd: Path) -> Path:
    """The git top level containing cwd, or cwd itself outside a repository."""
    from keel.agent.core.git.runner import toplevel

    return toplevel(cwd) or cwd


def repo_config_path(cwd: Path) -> Path | None:
    """The repository's `.keel/config.toml` when there is one.

    git is asked only when such a file exists in cwd or above it: the top level is one of those
    directories (unless GIT_DIR or GIT_WORK_TREE moves it), so without one there is nothing to find.
    """
    moved = "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ
    if not moved and not any((d / ".keel" / "config.toml").is_file() for d in (cwd, *cwd.parents)):
        return None
    path = repo_root(cwd) / ".keel" / "config.toml"
    return path if path.is_file() else None


def claude_settings_paths(cwd: Path) -> list[Path]:
    """The repository's `.claude/settings.json` and `.claude/settings.local.json` that exist (their hooks)."""
    names = ("settings.json", "settings.local.json")
    if not any((d / ".claude" / n).is_file() for d in (cwd, *cwd.parents) for n in names):
        return []
    folder = repo_root(cwd) / ".claude"
    return [folder / name for name in names if (folder / name).is_file()]


def env_layer() -> dict[str, Any]:
    env = {}
    if model := os.environ.get("KEEL_MODEL"):
        env["model"] = model
    if api_base := os.environ.get("KEEL_API_BASE"):
        env["api_base"] = api_base
    return env


@dataclass
class ConfigSources:
    """The layers of one launch (files, lowest first; flags), resolved into a KeelConfig when first asked."""

    cwd: Path
    flags: dict[str, Any]
    files: list[Path]
    _config: KeelConfig | None = field(default=None, repr=False)
    # the repository's .keel/config.toml, and whether it may widen permissions (keel.agent.core.trust)
    repo_file: Path | None = None
    trusted: bool = False
    # the repository's Claude Code settings files, whose "hooks" apply when it is trusted (agent/core/hooks)
    claude_files: list[Path] = field(default_factory=list)

    @classmethod
    def find(cls, cwd: Path, flags: dict[str, Any]) -> ConfigSources:
        """The user's config file, then the repository's, each only if it exists; flags left unset dropped.

        The `trust` flag (--trust) trusts the repository for this launch; otherwise it is trusted when
        the person recorded its folder (`keel trust`).
        """
        flags = dict(flags)
        trust_once = bool(flags.pop("trust", False))
        files = [path for path in (user_config_path(),) if path.is_file()]
        sources = cls(cwd, {k: v for k, v in flags.items() if v is not None}, files)
        if repo := repo_config_path(cwd):
            files.append(repo)
            sources.repo_file = repo
            sources.trusted = trust_once or sources.folder_trusted()
        if claude := claude_settings_paths(cwd):
            from keel.agent.core.trust import is_trusted

            sources.claude_files = claude
            sources.trusted = trust_once or is_trusted(claude[0].parent.parent)
        return sources

    def folder_trusted(self) -> bool:
        """Whether the repository's folder is recorded as trusted."""
        from keel.agent.core.trust import is_trusted

        return self.repo_file is not None and is_trusted(self.repo_file.parent.parent)

    def untrusted_keys(self) -> list[str]:
        """The keys of the repository's config that are ignored until its folder is trusted."""
        if self.trusted or (self.repo_file is None and not self.claude_files):
            return []  # nothing to read: the first frame needs no pydantic
        from keel.agent.core.config import load_file, merged_layers
        from keel.agent.core.config_trust import narrowed
        from keel.agent.core.hooks.config import claude_hooks

        keys = [f"hooks ({p.parent.name}/{p.name})" for p in self.claude_files if claude_hooks(p)]
        if self.repo_file is None:
            return keys
        below = merged_layers([path for path in self.files if path != self.repo_file])
        return narrowed(load_file(self.repo_file), below)[1] + keys

    @property
    def trust_root(self) -> Path | None:
        """The repository folder whose trust the repository's config files wait for (None: no such file)."""
        if self.repo_file is not None:
            return self.repo_file.parent.parent
        return self.claude_files[0].parent.parent if self.claude_files else None

    def with_trust(self) -> ConfigSources:
        """The same sources with the repository's config trusted (the config built afresh)."""
        return ConfigSources(
            self.cwd, self.flags, self.files, None, self.repo_file, True, self.claude_files
        )

    @property
    def plain(self) -> bool:
        """Nothing to validate: no config file, and only flags no schema can reject (env values are free text)."""
        return not self.files and not self.claude_files and set(self.flags) <= FREE_TEXT

    def check(self) -> None:
        """Build the config now unless it is plain: a broken one raises ConfigError (exit 2)."""
        if not self.plain:
            self.config()

    def config(self) -> KeelConfig:
        if self._config is None:
            from keel.agent.core.config import config_from

            self._config = config_from(self)
        return self._config

    def model(self) -> str | None:
        """The model named by a flag or the environment (a config file may name one too: see config())."""
        return self.flags.get("model") or env_layer().get("model")
