"""What `import keel` offers programs and front ends: settings resolved as `keel run` resolves them, one task run
to its end, and the few core services a front end needs (the embedded model, undo, worktrees, past sessions).

Importing it loads nothing heavy: each function imports what it uses, so a front end may import it before its
first paint. Front ends reach the core through this module, the Session and the protocol only.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keel.agent.core.model.local.names import is_embedded

if TYPE_CHECKING:
    # re-exported (`as`), so a front end annotates with them without importing the git services
    from keel.agent.core.commands.markdown import MarkdownCommand as MarkdownCommand
    from keel.agent.core.git.undo import UndoPlan as UndoPlan
    from keel.agent.core.git.worktrees import Worktree as Worktree
    from keel.agent.core.protocol import AnyEvent, ModelProgress, TaskFinished
    from keel.agent.core.settings import SessionSettings
    from keel.agent.core.skills.catalog import Skill as Skill


def session_settings(cwd: Path | str = ".", **flags: Any) -> SessionSettings:
    """The settings `keel run` would use in cwd: flags (model, api_base, budget, ...) over the environment over
    the config files, then the embedded model when nothing names one."""
    from keel.agent.core.config import resolve_config
    from keel.agent.core.settings import settings_from_config

    root = Path(cwd).resolve()
    return settings_from_config(resolve_config(root, flags), root, interactive=False)


async def run_task(
    prompt: str | None,
    settings: SessionSettings,
    on_event: Callable[[AnyEvent], None] | None = None,
    resume: Path | None = None,
) -> TaskFinished:
    """Run one task (or, with prompt None, continue the resumed one) and return how it finished; every event
    goes to on_event as it happens."""
    from keel.agent.core.protocol import Continue, TaskFinished, UserPrompt
    from keel.agent.core.session import Session
    from keel.agent.core.store import no_task_to_continue

    session = Session(settings, resume=resume)
    if prompt is None and not session.state.task_prompt:
        await session.close()  # lets go of the session, which was never started
        raise no_task_to_continue(session.id)
    async with session:
        session.submit(UserPrompt(text=prompt) if prompt else Continue())
        async for event in session.events():
            if on_event is not None:
                on_event(event)
            if isinstance(event, TaskFinished):
                return event
    raise RuntimeError("the session ended without session.finished")  # the loop always sends one


# ---------------------------------------------------------------- trusting a repository


def markdown_commands(root: Path) -> dict[str, MarkdownCommand]:
    """The Markdown slash commands of a workspace and the user (`.keel/commands`, `.claude/commands`,
    `~/.config/keel/commands`), by name: a prompt `/NAME args` is expanded by the session."""
    from keel.agent.core.commands.markdown import find_commands

    return find_commands(root)


def named_command(root: Path, prompt: str) -> tuple[MarkdownCommand, str] | None:
    """The Markdown command a prompt `/NAME args` names, with its arguments (None for any other prompt)."""
    from keel.agent.core.commands.markdown import named_command as named

    return named(root, prompt)


def skills(root: Path) -> list[Skill]:
    """The skills a session in `root` lists to its model (`.keel/skills`, `.claude/skills`, the user's)."""
    from keel.agent.core.skills.catalog import find_skills

    return find_skills(root)


def trust_was_declined(folder: Path) -> bool:
    """Whether the person said no when asked to trust this repository (so it is not asked again)."""
    from keel.agent.core.trust import was_declined

    return was_declined(folder)


def record_trust(folder: Path, trusted: bool) -> None:
    """Record the person's answer about a repository's config, in their own config folder: trusted (its
    config applies in full from now on), or not (its widening keys stay ignored, and nobody asks again)."""
    from keel.agent.core.trust import decline_folder, trust_folder

    if trusted:
        trust_folder(folder)
    else:
        decline_folder(folder)


# ---------------------------------------------------------------- models


def is_embedded_model(model: str) -> bool:
    """Whether `model` names an embedded local model (which runs in a worker process of keel's)."""
    return is_embedded(model)


def embedded_model_name(model: str | None) -> str:
    """The full `keel-local/NAME` of the embedded model `model` names (the default for None or a bare
    `keel-local/`), or `keel-local/<absolute path>` for a GGUF file; ConfigError (exit 2) lists the known
    names for an unknown one, or says what is wrong with the file. Loads no pydantic."""
    from keel.agent.core.model.local.model_file import local_model_name

    return local_model_name(model)


def warm_up() -> None:
    """Import what a session needs (litellm, the tools) now, so the first prompt does not wait for it."""
    import keel.agent.core.session  # noqa: F401
    from keel.agent.core.model.client import litellm_module
    from keel.tools import default_tools

    litellm_module()
    default_tools()


def prepare_model(
    settings: SessionSettings, progress: Callable[[ModelProgress], None] | None = None
) -> str | None:
    """Start the embedded model's worker when the settings use it (it then assembles the file once and loads
    it, telling `progress`); why it cannot run here, else None. Other models need nothing."""
    if not is_embedded(settings.model):
        return None
    from keel.agent.core.errors import KeelError
    from keel.agent.core.model.local.endpoint import prepare_embedded_model

    try:
        prepare_embedded_model(settings.context_window, progress, settings.model)
    except (KeelError, OSError) as exc:
        return str(exc)
    return None


async def ready_model(settings: SessionSettings) -> None:
    """Like prepare_model, off the event loop, raising what stops the model (LocalModelUnavailable)."""
    if is_embedded(settings.model):
        from keel.agent.core.model.local.endpoint import prepare_embedded_model

        await asyncio.to_thread(
            prepare_embedded_model, settings.context_window, None, settings.model
        )


def stop_model_workers() -> None:
    """End the embedded model's worker processes, if this process started any (a front end closes)."""
    endpoint = sys.modules.get("keel.agent.core.model.local.endpoint")
    if endpoint is not None:
        endpoint.stop_workers()


# ---------------------------------------------------------------- undo, worktrees, past sessions


def plan_undo(workspace: Path, checkpoint: str = "") -> UndoPlan:
    """What undoing would restore in `workspace`: checkpoint `checkpoint` (an id prefix), else the state before
    the last turn that changed it; `plan.restore()` does it, undoably. CheckpointError for an unknown id."""
    from keel.agent.core.git.undo import plan_undo as plan

    return plan(workspace, checkpoint)


def repo_top(path: Path) -> Path:
    """The top level of the git working tree holding `path`; a KeelError says why there is none."""
    from keel.agent.core.git.worktrees import repo_top as top

    return top(path)


async def create_worktree(repo: Path, name: str) -> Worktree:
    """A new git worktree of `repo` on a new branch `keel/<name>` (suffixed when taken), under keel's home."""
    from keel.agent.core.git.worktrees import create_worktree as create

    return await create(repo, name)


async def remove_worktree(worktree: Worktree) -> None:
    """Remove a worktree's directory and git's record of it; its branch and commits stay."""
    from keel.agent.core.git.worktrees import remove_worktree as remove

    await remove(worktree)


def find_session(session_id: str | None, cwd: Path | None = None) -> Path | None:
    """The log of a session by id or id prefix; with no id, the newest session started in cwd."""
    from keel.agent.core.store import find_session as find

    return find(session_id, cwd)


def past_sessions(cwd: Path) -> list[Path]:
    """The logs of the sessions started in cwd, newest first: the ones `keel sessions` lists there."""
    from keel.agent.core.store import first_event, sessions_dir

    directory = sessions_dir()
    if not directory.is_dir():
        return []
    logs = sorted(directory.glob("*.jsonl"), reverse=True)
    return [log for log in logs if (started := first_event(log)) and started.cwd == str(cwd)]


def read_session(log: Path) -> list[AnyEvent]:
    """A session's events, from its log, to show it again or resume it."""
    from keel.agent.core.store import read_events

    return read_events(log)


def tracebacks_held() -> AbstractContextManager[None]:
    """While a UI draws on the terminal, --debug's tracebacks of internal errors wait; they print after it."""
    from keel.agent.core.diagnostics import tracebacks_held as held

    return held()
