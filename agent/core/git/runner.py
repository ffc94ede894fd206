"""The one way keel runs git: a command in a directory, its output as text or bytes, a failure as a typed error."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from keel.agent.core.errors import KeelError
from keel.tools.exec.git_safety import (
    add_without,
    driver_overrides,
    git_environment,
    gitlinks,
    hardened_args,
    subcommand_index,
)

# No user hooks, no signing prompts, no auto-gc racing with parallel agents, a fixed committer.
NEUTRAL_CONFIG = (
    "core.hooksPath=/dev/null",
    "commit.gpgsign=false",
    "gc.auto=0",
    "user.name=keel",
    "user.email=keel@localhost",
)


class GitError(KeelError):
    """git is not installed, or a git command failed; subclasses say which service it failed for."""


@dataclass(frozen=True)
class Git:
    """Runs git in `cwd` with `env` and `config` (`-c` settings), hardened against the repository.

    Only PATH, HOME, the locale and `env`'s GIT_* variables reach git (never API keys), and no
    setting of the repository's config runs a program (tools/exec/git_safety.py). `git_dir` and
    `common_dir`, when given, are used instead of what the work tree's `.git` file says (a model
    may have rewritten it). A failure raises `error` (a GitError) naming the command, `where` it
    ran and git's last line.
    """

    cwd: Path
    env: Mapping[str, str] | None = None
    config: Sequence[str] = ()
    where: str = ""
    error: type[GitError] = GitError
    timeout: float | None = None
    git_dir: Path | None = None
    common_dir: Path | None = None

    def text(self, *args: str, input: str | None = None, strip: bool = True) -> str:
        """The command's stdout as text; file names that are not UTF-8 keep their bytes (surrogateescape)."""
        data = input.encode("utf-8", "surrogateescape") if input is not None else None
        text = self._run(args, data).decode("utf-8", "surrogateescape")
        return text.strip() if strip else text

    def binary(self, *args: str) -> bytes:
        """The command's stdout as it came (a binary patch)."""
        return self._run(args, None)

    def _environment(self) -> dict[str, str]:
        """git's environment: the clean one, with the git dirs keel knows pinned."""
        pinned = dict(self.env or {})
        if self.git_dir is not None:
            pinned.update(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.cwd))
        if self.common_dir is not None:
            pinned["GIT_COMMON_DIR"] = str(self.common_dir)
        return git_environment(os.environ if self.env is None else self.env, pinned)

    def _drivers(self, env: dict[str, str]) -> list[str]:
        """Overrides for the program-running drivers the repository's config names (see git_safety)."""
        try:
            done = subprocess.run(
                ["git", "config", "--list", "--name-only", "--show-scope"],
                cwd=self.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return []
        return driver_overrides(done.stdout.decode("utf-8", "surrogateescape").splitlines())

    def _run(self, args: Sequence[str], input: bytes | None) -> bytes:
        env = self._environment()
        config = [*self.config, *self._drivers(env)]
        settings = [p for s in config for p in ("-c", s)]
        index = subcommand_index(args)
        if index < len(args) and args[index] == "add":
            staged = self._call([*settings, "ls-files", "--stage", "-z"], env, None)
            args = add_without(list(args), gitlinks(staged))
        return self._call([*settings, *args], env, input, shown=args)

    def _call(
        self,
        args: Sequence[str],
        env: dict[str, str],
        input: bytes | None,
        shown: Sequence[str] | None = None,
    ) -> bytes:
        """Run one hardened git command line; its stdout, or `error` naming `shown` (else `args`)."""
        argv = ["git", *hardened_args(list(args))]
        args = shown if shown is not None else args[subcommand_index(args) :]
        where = f" {self.where}" if self.where else ""
        try:
            done = subprocess.run(
                argv,
                cwd=self.cwd,
                env=env,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise self.error(f"git {command(args)} took over {self.timeout:g} s{where}") from None
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) and self.cwd.is_dir():
                raise self.error("git is not installed or not on PATH") from None
            raise self.error(f"cannot run git in {self.cwd}: {exc.strerror}") from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = lines[-1].removeprefix("fatal: ") if lines else f"exit code {done.returncode}"
            raise self.error(f"git {command(args)} failed{where}: {detail}")
        return done.stdout


def command(args: Sequence[str]) -> str:
    """How an error names a git command: `worktree add`, `commit-tree`; never its paths or hashes."""
    if len(args) > 1 and args[0] in ("worktree", "stash", "remote") and not args[1].startswith("-"):
        return f"{args[0]} {args[1]}"
    return args[0] if args else ""


def toplevel(path: Path, timeout: float | None = 10.0) -> Path | None:
    """The top level of the git working tree holding `path`; None without one (or without git)."""
    try:
        top = Git(path, timeout=timeout).text("rev-parse", "--show-toplevel")
    except GitError:
        return None
    return Path(top) if top else None
