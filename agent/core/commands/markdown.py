"""Markdown slash commands: `.keel/commands/`, `.claude/commands/` and `~/.config/keel/commands/`, each
`NAME.md` the prompt `/NAME args` stands for (`$ARGUMENTS`, `$1`…, front matter for description and model)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from keel.agent.core.commands.front_matter import split_front_matter
from keel.agent.core.config_files import user_config_path
from keel.agent.core.repo_files import text_within

_POSITIONAL = re.compile(r"\$(\d)")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


@dataclass(frozen=True)
class MarkdownCommand:
    """One command file: its name (the file's stem), what its front matter says, and its body."""

    name: str
    description: str
    body: str
    path: Path
    argument_hint: str = ""
    model: str = ""


def command_folders(root: Path) -> list[tuple[Path, Path | None]]:
    """Where commands come from, the first one winning a name: the repository's, Claude Code's, the user's;
    each with the root its files must stay in."""
    return [
        (root / ".keel" / "commands", root),
        (root / ".claude" / "commands", root),
        (user_config_path().parent / "commands", None),
    ]


def find_commands(root: Path) -> dict[str, MarkdownCommand]:
    """Every command file under the folders (subfolders too, as Claude Code's), by name; a repository's
    file that links out of it is left out."""
    found: dict[str, MarkdownCommand] = {}
    for folder, inside in command_folders(root):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.md")):
            if _NAME.match(path.stem) and path.stem not in found and path.is_file():
                try:
                    found[path.stem] = _read(path, text_within(inside, path))
                except OSError:
                    continue
    return found


def _read(path: Path, text: str) -> MarkdownCommand:
    keys, body = split_front_matter(text)
    first_line = next((line.strip("# ") for line in body.splitlines() if line.strip()), "")
    return MarkdownCommand(
        name=path.stem,
        description=keys.get("description") or first_line[:80],
        body=body,
        path=path,
        argument_hint=keys.get("argument-hint", ""),
        model=keys.get("model", ""),
    )


def expand(command: MarkdownCommand, arguments: str) -> str:
    """The prompt the command stands for: `$ARGUMENTS` is every argument, `$1`… one each; a body that uses
    neither gets the arguments after it, as Claude Code does."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    body = command.body
    uses = "$ARGUMENTS" in body or _POSITIONAL.search(body)
    body = body.replace("$ARGUMENTS", arguments)
    body = _POSITIONAL.sub(lambda m: _nth(words, int(m.group(1))), body)
    if arguments and not uses:
        body = f"{body.rstrip()}\n\nARGUMENTS: {arguments}\n"
    return body.strip()


def _nth(words: list[str], number: int) -> str:
    return words[number - 1] if 0 < number <= len(words) else ""


def named_command(root: Path, prompt: str) -> tuple[MarkdownCommand, str] | None:
    """The command a prompt `/NAME args` names and its arguments; None for any other prompt."""
    text = prompt.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    head, _, arguments = text[1:].partition(" ")
    command = find_commands(root).get(head) if _NAME.match(head) else None
    return None if command is None else (command, arguments.strip())


def expand_prompt(root: Path, prompt: str) -> str:
    """The prompt itself, or, when it names a command, the prompt that command stands for."""
    named = named_command(root, prompt)
    return prompt if named is None else expand(*named)
