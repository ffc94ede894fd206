"""mini-swe-agent modes of the small-model benchmark: mini-swe-agent in a venv of its own, its own `mini`
CLI run unattended (`--yolo --exit-immediately`, the non-interactive DefaultAgent) with its default config
(mini.yaml: one bash tool, called through the API's tool calls) or its text-based one (mini_textbased.yaml:
one command in a fenced block per reply, for models weak at tool calls), the task as its task text, keel's
step limit and reply limit, no cost limit (a local model costs nothing and litellm knows no price for it).
Tokens, calls and how it ended come from the trajectory json it saves (each model response's `usage`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _small_model_keel import KeelSettings
from _small_model_peers import DUMMY_KEY, Invocation, Outcome, Peer, PeerRun, ensure_peer, run_peer
from _small_model_tasks import Task

from keel.agent.core.profile import LOCAL_REPLY_TOKENS

MINI = Peer("mini-swe-agent", "2.4.6", "mini")
TRAJECTORY = "trajectory.json"  # in the run's scratch folder, outside the repository
CONFIGS = {  # mode: mini's config and the model class that reads its replies (None: mini's default)
    "mini-swe-agent": ("mini.yaml", None),
    "mini-textbased": ("mini_textbased.yaml", "litellm_textbased"),
}
MINI_MODES = tuple(CONFIGS)


def mini_command(
    binary: Path, task: Task, settings: KeelSettings, trajectory: Path, mode: str = MINI_MODES[0]
) -> list[str]:
    """The `mini` argv for one task: the same model and server as keel's, the mode's config with
    keel's step limit and the reply limit keel gives a small model it is served (a reply that never
    ends would otherwise run until the server's window is full), and the trajectory saved to `trajectory`."""
    # a call may take the attempt's whole timeout (litellm's own is 600 s)
    kwargs = {
        "temperature": settings.temperature,
        "api_key": DUMMY_KEY,
        "timeout": settings.timeout,
        "max_tokens": LOCAL_REPLY_TOKENS,
    }
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
    base, model_class = CONFIGS[mode]
    config = [base, f"agent.step_limit={settings.max_steps}", "agent.cost_limit=0"]
    config += ["model.cost_tracking=ignore_errors"]
    config += [f"model.model_kwargs.{key}={json.dumps(value)}" for key, value in kwargs.items()]
    command = [str(binary), "--yolo", "--exit-immediately", "--agent-class", "default"]
    if model_class:
        command += ["--model-class", model_class]
    command += ["--model", settings.model, "--task", task.spec.prompt, "--output", str(trajectory)]
    for spec in config:
        command += ["--config", spec]
    return command


MINI_ENV = {
    "MSWEA_CONFIGURED": "1",  # no first-run setup questions
    "MSWEA_SILENT_STARTUP": "1",
    "MSWEA_COST_TRACKING": "ignore_errors",
    "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",  # a dead server fails now, not after minutes of back-off
}


def usage_tokens(message: dict[str, Any]) -> int:
    """The tokens of the model response a trajectory message carries (0 for other messages)."""
    extra = message.get("extra")
    response = extra.get("response") if isinstance(extra, dict) else None
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return 0
    total = usage.get("total_tokens")
    if total is None:
        total = (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
    return int(total or 0)


def cut(text: str, limit: int = 1500) -> str:
    """`text`, or its first `limit` characters and how many more there were."""
    return text if len(text) <= limit else f"{text[:limit]}[... {len(text) - limit} more]"


def rejected_reply(message: dict[str, Any]) -> str | None:
    """The model's text behind a format error message (mini keeps only the error as a message, the
    model's response in its extra); None for any other message."""
    extra = message.get("extra")
    response = extra.get("response") if isinstance(extra, dict) else None
    if message.get("role") == "assistant" or not isinstance(response, dict):
        return None
    choices = response.get("choices") or [{}]
    reply = (choices[0] or {}).get("message") or {}
    return str(reply.get("content") or "") if isinstance(reply, dict) else None


def readable(messages: list[dict[str, Any]]) -> str:
    """A trajectory's messages as a person reads them: each role, its text, the commands it ran, and
    the replies mini rejected for their format."""
    parts = []
    for message in messages[1:]:  # the system prompt is mini's own, the same every run
        if (rejected := rejected_reply(message)) is not None:
            parts.append(f"## assistant (no tool call)\n{cut(rejected)}")
        calls = [
            f"-> {(call.get('function') or {}).get('arguments')}"
            for call in message.get("tool_calls") or []
            if isinstance(call, dict)
        ]
        text = cut(str(message.get("content") or ""))
        parts.append("\n".join([f"## {message.get('role')}\n{text}", *calls]))
    return "\n\n".join(parts)


def read_trajectory(data: dict[str, Any]) -> Outcome:
    """Exit status, model calls and tokens (every response's usage, format errors included) from a
    mini-swe-agent trajectory, and its messages to read."""
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    messages = [m for m in data.get("messages", []) if isinstance(m, dict)]
    return Outcome(
        status=str(info.get("exit_status") or "no finish"),
        calls=int(stats.get("api_calls") or 0),
        tokens=sum(usage_tokens(message) for message in messages),
        transcript=readable(messages),
    )


def read_mini(_output: str, scratch: Path) -> Outcome:
    """The outcome from the trajectory mini saved in `scratch` ("no trajectory" when it saved none)."""
    path = scratch / TRAJECTORY
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return Outcome(status="no trajectory", calls=0, tokens=0)
    return read_trajectory(data) if isinstance(data, dict) else Outcome("no trajectory", 0, 0)


def mini_invocation(binary: Path, task: Task, settings: KeelSettings, mode: str) -> Invocation:
    """How to run mini-swe-agent on `task` in one of MINI_MODES, and read what it left."""
    return Invocation(
        command=lambda _repo, scratch: mini_command(
            binary, task, settings, scratch / TRAJECTORY, mode
        ),
        env=MINI_ENV,
        read=read_mini,
    )


def run_mini(task: Task, settings: KeelSettings, mode: str) -> PeerRun:
    """The task through mini-swe-agent in one of MINI_MODES, then the check."""
    binary = ensure_peer(MINI)
    return run_peer(task, mini_invocation(binary, task, settings, mode), settings.timeout)
