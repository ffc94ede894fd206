"""How keel runs git in a repository it does not trust: settings that stop repository config from
running programs (fsmonitor, hooks, pagers, editors, credential helpers, signing, ext:: transports,
diff/filter/merge drivers), and an environment without the user's secrets.

keel's own git runs outside the sandbox, as the user, so a `.git/config` the repository shipped (or
a command wrote) must never pick what it executes. `-c` settings given on the command line win over
every config file (include.path and includeIf included); drivers, whose names the repository
chooses, are neutralized by name (see `driver_overrides`). Both agent/core/git/runner.py and the tools'
own `git ls-files` use this module.

Nested repositories (submodules, vendored or command-made repos) have configs of their own, whose
driver names keel does not know: git must never run inside one. `diff.ignoreSubmodules=all` keeps
status, diff and commit out of them; `git add` ignores that setting, so `add_without` leaves the
gitlinks out of it; code_map and lint walk a nested repository instead of running its git
(`in_nested_repository`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

HARDENED_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=true",
    "sequence.editor=true",
    "core.askPass=",
    "credential.helper=",  # an empty value clears the list of helpers
    "core.sshCommand=ssh -o BatchMode=yes",
    "core.gitProxy=",
    "core.alternateRefsCommand=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "gpg.ssh.defaultKeyCommand=",
    "protocol.ext.allow=never",
    "submodule.recurse=false",
    "maintenance.auto=false",
    "gc.auto=0",
    # status, diff and commit would run `git status` inside each nested repository (a submodule,
    # a vendored repo): with that repository's own config, filters and all
    "diff.ignoreSubmodules=all",
)

# Subcommands that can show a diff: they also get --no-ext-diff (diff.external, diff drivers) and
# --no-textconv, since an empty diff.external is an error rather than "none".
DIFF_COMMANDS = {"diff", "log", "show", "format-patch", "diff-tree", "diff-index", "diff-files"}

_PASSED = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "XDG_CONFIG_HOME"}
_FIXED = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
}

# Keys whose value is a program, in sections whose middle name the repository picks.
_DRIVER_KEY = re.compile(
    r"(?P<section>filter|diff|merge|trailer)\.(?P<name>.+)\."
    r"(?P<key>clean|smudge|process|textconv|command|driver|cmd)",
    re.IGNORECASE,
)
_REPOSITORY_SCOPES = {"local", "worktree"}


def git_environment(
    source: Mapping[str, str], keel_vars: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a git keel runs: PATH, HOME, locale and the like from `source`, the GIT_*
    variables keel itself sets (`keel_vars`), and settings that keep git from prompting; no API keys."""
    env = {
        name: value for name, value in source.items() if name in _PASSED or name.startswith("LC_")
    }
    env.setdefault("PATH", os.defpath)
    env.update({k: v for k, v in (keel_vars or {}).items() if k.startswith("GIT_")})
    env.update(_FIXED)
    return env


def driver_overrides(scoped_names: Iterable[str]) -> list[str]:
    """`-c` settings emptying every program-valued driver key the repository's own config sets.

    `scoped_names` are the lines of `git config --list --name-only --show-scope` ("local\\tname").
    """
    overrides: list[str] = []
    for line in scoped_names:
        scope, _, name = line.partition("\t")
        match = _DRIVER_KEY.fullmatch(name)
        if scope in _REPOSITORY_SCOPES and match and f"{name}=" not in overrides:
            overrides.append(f"{name}=")
    return overrides


def subcommand_index(args: Sequence[str]) -> int:
    """Where the subcommand is in a git command line after `git` (len(args) when there is none)."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-C", "-c") else 1  # options that take the next word
    return index


def hardened_args(args: list[str] | tuple[str, ...]) -> list[str]:
    """A git command line after `git`: global options that run nothing, then `args` (diff commands
    also without external diff programs and textconv)."""
    options = ["--no-pager"]
    for setting in HARDENED_CONFIG:
        options += ["-c", setting]
    args = list(args)
    index = subcommand_index(args)
    if index < len(args) and args[index] in DIFF_COMMANDS:
        args[index + 1 : index + 1] = ["--no-ext-diff", "--no-textconv"]
    return [*options, *args]


def gitlinks(staged: bytes) -> list[str]:
    """The paths of the nested repositories (gitlinks: submodules, embedded repos) in the output of
    `git ls-files --stage -z`."""
    found = []
    for entry in staged.split(b"\0"):
        info, _, path = entry.partition(b"\t")
        if info.startswith(b"160000 "):
            found.append(path.decode("utf-8", "surrogateescape"))
    return found


def add_without(args: list[str], nested: list[str]) -> list[str]:
    """A `git add` command line that leaves out the `nested` repositories: `git add` ignores
    diff.ignoreSubmodules and runs `git status` in each (with its own config) to see if it changed."""
    if not nested:
        return args
    excluded = [f":(top,exclude,literal){path}" for path in nested]
    start = subcommand_index(args) + 1
    if "--" in args[start:] or any(not arg.startswith("-") for arg in args[start:]):
        return [*args, *excluded]
    return [*args, "--", ":(top)", *excluded]


def in_nested_repository(directory: Path, root: Path) -> bool:
    """Whether `directory` lies in a repository nested in the workspace `root` (a `.git` in it or
    in a folder between them): git run there would read that repository's config, not root's."""
    current = directory
    while current != root and root in current.parents:
        if os.path.lexists(current / ".git"):
            return True
        current = current.parent
    return False
