"""20 canary secrets in keel's environment and config: 0 in session logs, model requests, or commands' env.

The scripted session dumps its command environment, cats files holding canaries (a .env file and
the repository's keel config), reads one with read_file, and echoes one in its own message.
"""

from __future__ import annotations

import json
import secrets

from keel_cli import git_repo, run_keel

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


def canaries() -> tuple[dict[str, str], dict[str, str]]:
    """18 secrets in environment variables, 2 in the config (an api_base password and a query key)."""
    env = {}
    for n in range(15):
        suffix = ("API_KEY", "TOKEN", "SECRET")[n % 3]
        env[f"CANARY_{n}_{suffix}"] = f"cnry{n}x{secrets.token_hex(12)}"
    env["OPENAI_API_KEY"] = "sk-proj-" + secrets.token_urlsafe(30).replace("-", "a").replace(
        "_", "b"
    )
    env["GITHUB_TOKEN"] = "ghp_" + secrets.token_hex(18)
    env["BUILD_HELPER_VALUE"] = "ghp_" + secrets.token_hex(18)  # a key shape under an innocent name
    config = {"password": f"cfgpw{secrets.token_hex(10)}", "query": f"cfgq{secrets.token_hex(10)}"}
    return env, config


def count(values: list[str], text: str) -> int:
    return sum(text.count(value) for value in values)


def test_canaries_never_leave_the_process(scripted_server, tmp_path):
    env, config = canaries()
    values = [*env.values(), *config.values()]
    assert len(values) == 20
    echoed = env["CANARY_4_TOKEN"]
    script = [
        Reply(
            tool_calls=[
                ScriptedToolCall(
                    name="run_command",
                    arguments={"command": "env > env_dump.txt; cat env_dump.txt"},
                )
            ]
        ),
        Reply(
            tool_calls=[
                ScriptedToolCall(
                    name="run_command", arguments={"command": "cat .env .keel/config.toml"}
                )
            ]
        ),
        Reply(
            text=f"The .env file holds {echoed}; reading it again.",
            tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": ".env"})],
        ),
        Reply(text="Checked the environment and the files."),
    ]
    server = scripted_server(script)
    server.inject_faults(
        "drop", "500"
    )  # retried errors are logged too: their messages must be clean
    dotenv = "".join(f"{name}={value}\n" for name, value in env.items())
    repo = git_repo(
        tmp_path / "repo",
        {
            ".env": dotenv,
            ".keel/config.toml": (
                f'model = "openai/any"\napi_base = "{server.url}"\nretries = 4\nretry_base_delay = 0.01\n'
                # other models' servers: an authenticating proxy, a gateway keyed in its URL
                f'[models."openai/proxied"]\napi_base = "https://keel:{config["password"]}@proxy.example/v1"\n'
                f'[models."openai/gateway"]\napi_base = "https://gw.example/v1?api-key={config["query"]}"\n'
            ),
        },
    )
    home = tmp_path / "home"
    result = run_keel(
        "run",
        "--output-format",
        "stream-json",
        "--trust",  # the repository's config names the model's server
        "check the secrets",
        cwd=repo,
        home=home,
        **env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.events[-1]["status"] == "completed"
    tools = [e for e in result.events if e["type"] == "tool.finished"]
    assert [e["ok"] for e in tools] == [True, True, True], [e["output"][:200] for e in tools]

    logs = "".join(path.read_text() for path in (home / "sessions").glob("*.jsonl"))
    requests = "".join(json.dumps(r.body) for r in server.requests)
    command_env = (repo / "env_dump.txt").read_text()
    in_logs, in_requests, in_env = (
        count(values, logs),
        count(values, requests),
        count(values, command_env),
    )
    in_events = count(values, result.stdout)
    print(
        f"\ncanaries: {len(values)}, in session logs: {in_logs}, in model requests: {in_requests}, "
        f"in the command's environment: {in_env} (in stream-json events: {in_events})"
    )
    # the test can fail: the canaries were really there to leak
    assert count(values, dotenv) == 18 and "PATH=" in command_env and len(server.requests) == 6
    assert in_logs == 0
    assert in_requests == 0
    assert in_env == 0
    assert "[REDACTED]" in logs and "[REDACTED]" in requests  # masked where they would have been


def test_every_key_shape_is_masked_in_plain_text():
    from keel.agent.core.model.redact import MASK, Redactor

    body = "A" * 24
    shapes = [
        "sk-" + body,
        "sk-proj-" + body,
        "sk-ant-" + body,
        "github_pat_" + body,
        "AKIA" + "B" * 16,
        "xoxb-" + "1" * 12,
        "AIza" + "c" * 32,
        *(f"gh{kind}_{body}" for kind in "pousr"),
    ]
    redactor = Redactor(())
    for shape in shapes:
        assert redactor.redact(f"token: {shape} (line)") == f"token: {MASK} (line)", shape
    assert redactor.redact("the light was high, ghx_" + body) == "the light was high, ghx_" + body
