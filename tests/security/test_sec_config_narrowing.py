"""Which keys of an untrusted repository's config are ignored: those that widen, never those that narrow
(a pure function, checked directly)."""

from __future__ import annotations

import pytest

from keel.agent.core.config_trust import narrowed


@pytest.mark.parametrize(
    ("repo", "below", "kept", "ignored"),
    [
        ({"approval": "full-auto"}, {}, {}, ["approval"]),
        ({"approval": "auto-edit"}, {}, {"approval": "auto-edit"}, []),
        ({"approval": "full-auto"}, {"approval": "full-auto"}, {"approval": "full-auto"}, []),
        ({"approval": "auto-edit"}, {"approval": "read-only"}, {}, ["approval"]),
        ({"sandbox": {"mode": "full-access"}}, {}, {"sandbox": {}}, ["sandbox.mode"]),
        ({"sandbox": {"mode": "read-only"}}, {}, {"sandbox": {"mode": "read-only"}}, []),
        ({"sandbox": {"network": True}}, {}, {"sandbox": {}}, ["sandbox.network"]),
        ({"sandbox": {"network": False}}, {}, {"sandbox": {"network": False}}, []),
        (
            {"sandbox": {"fallback": "unsandboxed"}},
            {"sandbox": {"fallback": "refuse"}},
            {"sandbox": {}},
            ["sandbox.fallback"],
        ),
        ({"sandbox": {"fallback": "refuse"}}, {}, {"sandbox": {"fallback": "refuse"}}, []),
        (
            {
                "sandbox": {
                    "writable_roots": ["/"],
                    "env_allow": ["OPENAI_API_KEY"],
                    "env": {"A": "1"},
                }
            },
            {},
            {"sandbox": {}},
            ["sandbox.writable_roots", "sandbox.env_allow", "sandbox.env"],
        ),
        (
            {"sandbox": {"container": "c", "workspace_mount": "/app", "binds": {"/x": "/"}}},
            {},
            {"sandbox": {}},
            ["sandbox.binds", "sandbox.workspace_mount", "sandbox.container"],
        ),
        ({"mcp_servers": {"a": {}, "b": {}}}, {}, {}, ["mcp_servers.a", "mcp_servers.b"]),
        ({"api_base": "http://evil"}, {}, {}, ["api_base"]),
        (
            {"models": {"m": {"api_base": "http://evil", "context_window": 8192}}},
            {},
            {"models": {"m": {"context_window": 8192}}},
            ["models.m.api_base"],
        ),
        (
            {"max_steps": 9, "test_command": "pytest", "checkpoints": False},
            {},
            {
                "max_steps": 9,
                "test_command": "pytest",
                "checkpoints": False,
                "run_test_command": False,
            },
            ["test_command (as a command keel runs to verify changes)"],
        ),
        ({"test_command": "pytest"}, {"test_command": "pytest"}, {"test_command": "pytest"}, []),
        ({"run_test_command": True}, {}, {}, []),
        ({"run_test_command": False}, {}, {"run_test_command": False}, []),
    ],
)
def test_widening_keys_are_ignored_and_narrowing_ones_kept(repo, below, kept, ignored):
    assert narrowed(repo, below) == (kept, ignored)
