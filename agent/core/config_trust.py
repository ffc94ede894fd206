"""What an untrusted repository's `.keel/config.toml` may set: only what narrows, never what widens.

A repository is assumed hostile until the person trusts its folder (keel.agent.core.trust): its config may
make the approval or the sandbox stricter, tune limits and the model, but not allow more (a looser
approval or sandbox, network, writable folders, variables for commands), name programs keel would start
(MCP servers, hooks), or send the API key elsewhere (api_base). Its `test_command` stays as text in the system
prompt (the model runs it as any command, under the approval and the sandbox), but keel does not run it
itself to verify a change.
"""

from __future__ import annotations

from typing import Any

APPROVAL_ORDER = ["read-only", "auto-edit", "full-auto"]
SANDBOX_ORDER = ["read-only", "workspace-write", "full-access"]
# what applies without the repository's file: the stricter default of the TUI (auto-edit)
DEFAULT_APPROVAL = "auto-edit"
DEFAULT_SANDBOX = "workspace-write"
COMMAND_KEYS = ("mcp_servers", "api_base", "hooks")
SANDBOX_WIDENING = ("writable_roots", "env_allow", "env", "binds", "workspace_mount", "container")


def _not_wider(value: object, baseline: object, order: list[str]) -> bool:
    """Whether `value` is at most as permissive as `baseline` in `order` (unknown values: no)."""
    if value not in order or baseline not in order:
        return False
    return order.index(str(value)) <= order.index(str(baseline))


def narrowed(repo: dict[str, Any], below: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The repository's layer with every widening key left out, and those keys' dotted names.

    `below` is what the layers under it (the user's config) set: a repository may repeat or tighten it.
    """
    kept = dict(repo)
    ignored: list[str] = []
    if "approval" in kept and not _not_wider(
        kept["approval"], below.get("approval") or DEFAULT_APPROVAL, APPROVAL_ORDER
    ):
        del kept["approval"]
        ignored.append("approval")
    for key in COMMAND_KEYS:
        if key in kept and kept[key] != below.get(key):
            value = kept.pop(key)
            names = [f"{key}.{name}" for name in value] if isinstance(value, dict) else [key]
            ignored += names or [key]
    if kept.get("run_test_command") is not False:
        kept.pop("run_test_command", None)
    if "test_command" in kept and kept["test_command"] != below.get("test_command"):
        kept["run_test_command"] = False
        ignored.append("test_command (as a command keel runs to verify changes)")
    if isinstance(kept.get("models"), dict):
        models = {}
        for name, table in kept["models"].items():
            if isinstance(table, dict) and "api_base" in table:
                table = {k: v for k, v in table.items() if k != "api_base"}
                ignored.append(f"models.{name}.api_base")
            models[name] = table
        kept["models"] = models
    if isinstance(kept.get("sandbox"), dict):
        sandbox, dropped = _narrowed_sandbox(kept["sandbox"], below.get("sandbox") or {})
        kept["sandbox"] = sandbox
        ignored += [f"sandbox.{key}" for key in dropped]
    return kept, ignored


def _narrowed_sandbox(
    sandbox: dict[str, Any], below: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The repository's `[sandbox]` table without what loosens the one below it."""
    kept = dict(sandbox)
    dropped = []
    if "mode" in kept and not _not_wider(
        kept["mode"], below.get("mode") or DEFAULT_SANDBOX, SANDBOX_ORDER
    ):
        dropped.append("mode")
    if kept.get("network") and not below.get("network"):
        dropped.append("network")
    if kept.get("fallback") == "unsandboxed" and below.get("fallback") == "refuse":
        dropped.append("fallback")
    dropped += [key for key in SANDBOX_WIDENING if kept.get(key) and kept[key] != below.get(key)]
    for key in dropped:
        del kept[key]
    return kept, dropped


def untrusted_notice(config_file: str, root: str, ignored: list[str]) -> str:
    """The one notice that says which keys were ignored and how to apply them."""
    return (
        f"{config_file} is in a folder you have not trusted, so its keys that widen what keel may do "
        f"are ignored: {', '.join(ignored)}. To apply them, trust the folder with `keel trust {root}` "
        "(or pass --trust for one run)."
    )
