"""How keel runs git in a repository it does not trust: settings that stop repository config from
running programs (fsmonitor, hooks, pagers, editors, credential helpers, signing, ext:: transports,
diff/filter/merge drivers), and an environment without the user's secrets.

keel's own git runs outside the sandbox, as the user, so a `.git/config` the repository shipped (or
a command wrote) must never pick what it executes. `-c` settings given on the command line win over
every config file (include.path and includeIf included); drivers, whose names the repository
chooses, are neutralized by name (see `driver_overrides`). Both agent/git/runner.py and the tools'
own `git ls-files` use this module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

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


def hardened_args(args: list[str] | tuple[str, ...]) -> list[str]:
    """A git command line after `git`: global options that run nothing, then `args` (diff commands
    also without external diff programs and textconv)."""
    options = ["--no-pager"]
    for setting in HARDENED_CONFIG:
        options += ["-c", setting]
    args = list(args)
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-C", "-c") else 1  # options that take the next word
    if index < len(args) and args[index] in DIFF_COMMANDS:
        args[index + 1 : index + 1] = ["--no-ext-diff", "--no-textconv"]
    return [*options, *args]
