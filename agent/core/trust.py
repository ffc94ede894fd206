"""The folders a person trusts: a repository's `.keel/config.toml` widens nothing until its folder is one.

The list lives beside the user's config (`~/.config/keel/trusted_folders.json`), never in a repository,
so a repository cannot vouch for itself.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from keel.agent.core.config_files import repo_root, user_config_path
from keel.agent.core.errors import ConfigError


def trust_file() -> Path:
    """Where the trusted folders are recorded: next to the user's config.toml."""
    return user_config_path().parent / "trusted_folders.json"


def _folder(path: Path) -> str:
    return os.path.realpath(path)


def _read() -> dict[str, list[str]]:
    """The record: trusted folders, and those the person declined to trust when asked (real paths).
    A missing file trusts none; a broken one is a ConfigError."""
    path = trust_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"folders": [], "declined": []}
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot read the trusted folders ({exc}); fix or delete the file"
        ) from None
    record = {}
    for key in ("folders", "declined"):
        value = data.get(key, []) if isinstance(data, dict) else None
        if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
            raise ConfigError(
                f'{path}: expected {{"folders": ["/a/folder", ...]}}; fix or delete it'
            )
        record[key] = list(value)
    return record


def trusted_folders() -> list[str]:
    """The folders trusted so far (real paths)."""
    return _read()["folders"]


def is_trusted(folder: Path) -> bool:
    """Whether the person trusted this very folder (a repository's top level)."""
    return _folder(folder) in trusted_folders()


def was_declined(folder: Path) -> bool:
    """Whether the person said no when the TUI asked to trust this folder (it does not ask again)."""
    return _folder(folder) in _read()["declined"]


def trust_folder(folder: Path) -> Path:
    """Record `folder`'s repository (its git top level, else the folder) as trusted; returns that folder."""
    root = Path(_folder(repo_root(Path(_folder(folder)))))
    record = _read()
    if str(root) not in record["folders"]:
        record["folders"].append(str(root))
    record["declined"] = [f for f in record["declined"] if f != str(root)]
    _write(record)
    return root


def decline_folder(folder: Path) -> None:
    """Record that the person chose not to trust this folder, so the TUI does not ask each launch."""
    record = _read()
    if _folder(folder) not in record["declined"]:
        record["declined"].append(_folder(folder))
        _write(record)


def _write(record: dict[str, list[str]]) -> None:
    """Replace the file in one step (a crash leaves the old list), readable by its owner only."""
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".trusted_folders.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out, indent=2)
            out.write("\n")
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
