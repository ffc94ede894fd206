"""100 malformed tool calls through a real `keel run`: 100 error results, 0 crashes, the run completes."""

from __future__ import annotations

import json
from itertools import pairwise

from keel_cli import git_repo, run_streamed

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

HUGE = 120_000


def malformed_calls() -> list[tuple[str, str]]:
    """(name, raw arguments) pairs, each wrong in its own way; no two alike in a row."""
    broken_json = [
        '{"path": "a.txt"',
        '{path: "a.txt"}',
        "{'path': 'a.txt'}",
        '{"path": "a.txt",}',
        '{"path": "a.txt"}}',
        '{"path" "a.txt"}',
        "path=a.txt",
        '{"path": "a.txt"} and then some prose',
        '{"path": "\\x41.txt"}',
        '```json\n{"path": "a.txt"}\n```',
        '{"path": "a.txt", "offset": 01}',
        "\x00\x01\x02",
        '{"path": "a.txt"]',
        '{"path": "a.txt\n',
        "{}{}",
    ]
    unknown_names = [
        ("delete_everything", {}), ("readfile", {"path": "a.txt"}), ("Read_File", {"path": "a.txt"}),
        ("read_file ", {"path": "a.txt"}), ("functions.read_file", {"path": "a.txt"}),
        ("bash", {"command": "ls"}), ("shell", {"cmd": "ls"}), ("rm", {"path": "a.txt"}),
        ("🙂", {}), ("read_file\nwrite_file", {"path": "a.txt"}),
    ]  # fmt: skip
    wrong_types = [
        ("read_file", {"path": 123}), ("read_file", {"path": ["a.txt"]}), ("read_file", {"path": None}),
        ("read_file", {"path": "a.txt", "offset": "ten"}), ("read_file", {"path": "a.txt", "limit": [5]}),
        ("write_file", {"path": "n.txt", "content": 123}), ("write_file", {"path": True, "content": "x"}),
        ("edit_file", {"path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "maybe"}),
        ("run_command", {"command": ["ls", "-l"]}), ("run_command", {"command": "ls", "timeout": "soon"}),
        ("search", {"pattern": {"regex": "x"}}), ("find_files", {"pattern": 7}),
        ("apply_patch", {"patch": ["*** Begin Patch"]}), ("read_file", {"path": "a.txt", "offset": 1.5}),
        ("read_file", {"path": "a.txt", "offset": None}), ("write_file", {"path": "n.txt", "content": None}),
        ("find_files", {"pattern": None}), ("run_command", {"command": None}), ("code_map", {"path": 3.14}),
        ("lint", {"paths": "a.txt"}), ("job_output", {"job_id": 7}), ("read_file", {"path": "a.txt", "limit": "all"}),
    ]  # fmt: skip
    missing = [
        ("read_file", {}), ("write_file", {"path": "n.txt"}), ("write_file", {"content": "x"}),
        ("edit_file", {"path": "a.txt"}), ("edit_file", {"old_string": "a", "new_string": "b"}),
        ("apply_patch", {}), ("run_command", {}), ("search", {}), ("find_files", {}),
        ("read_file", {"offset": 2, "limit": 3}), ("job_output", {"stop": True}),
    ]  # fmt: skip
    extra = [
        ("read_file", {"path": "a.txt", "x": 1}), ("read_file", {"path": "a.txt", "Path": "b.txt"}),
        ("read_file", {"path": "a.txt", "verbose": True}), ("write_file", {"path": "n.txt", "content": "x", "mode": 420}),
        ("run_command", {"command": "ls", "cwd": "/"}), ("search", {"pattern": "x", "regex": True, "flags": "i"}),
        ("find_files", {"pattern": "*.py", "recursive": True}), ("edit_file", {"path": "a.txt", "old_string": "a", "new_string": "b", "count": 2}),
        ("apply_patch", {"patch": "*** Begin Patch\n*** End Patch", "dry_run": True}), ("code_map", {"path": ".", "depth": 3}),
    ]  # fmt: skip
    string_of_string = [
        '"a.txt"',
        json.dumps(json.dumps({"path": 5})),
        '"[]"',
        '"null"',
        json.dumps("{not json}"),
        json.dumps(json.dumps(json.dumps({"path": "a.txt", "bad": 1}))),
        '"\\"\\""',
        json.dumps("path"),
    ]
    empty_names = [
        ("", {"path": "a.txt"}),
        ("", {}),
        ("", {"command": "ls"}),
        (" ", {"path": "a.txt"}),
    ]
    huge = [
        ("read_file", {"path": "a" * HUGE}),
        ("read_file", {"path": "a.txt", "junk": "x" * HUGE}),
        ("no_such_tool", {"payload": "y" * HUGE}),
        ("write_file", {"path": "big.txt", "content": 12345, "pad": "z" * HUGE}),
    ]
    nonsense = [
        "[1, 2, 3]", "123", "null", "true", '{"path": {"nested": {"deep": [1, 2]}}}', "[" * 50_000 + "]" * 50_000,
        '{"a":' * 20_000 + "1" + "}" * 20_000, '{"path": "a.txt", "limit": {"$gt": 1}}', '{"": ""}',
        '{"path": "a.txt", "offset": 1e309}', '{"path": "\\ud800.txt"}', '{"path": "a.txt", "limit": -1e400}',
        '{"path": "a.txt", "path": 5}', '[{"path": "a.txt"}]', '{"path": "\\u0000"}', "1e999",
    ]  # fmt: skip
    calls: list[tuple[str, str]] = [("read_file", raw) for raw in broken_json]
    calls += [
        (name, json.dumps(args)) for name, args in unknown_names + wrong_types + missing + extra
    ]
    calls += [("read_file", raw) for raw in string_of_string]
    calls += [(name, json.dumps(args)) for name, args in empty_names]
    calls += [("search", raw) for raw in nonsense]
    calls += [(name, json.dumps(args)) for name, args in huge]
    return calls


def test_malformed_calls_give_errors_not_crashes(scripted_server, tmp_path):
    calls = malformed_calls()
    assert len(calls) == 100
    assert all(a != b for a, b in pairwise(calls))  # the loop guard stays quiet
    replies = [Reply(tool_calls=[ScriptedToolCall(name=n, arguments=raw)]) for n, raw in calls]
    server = scripted_server(
        [*replies, Reply(text="Done with the broken calls.")], args_chunk_chars=4096
    )
    repo = git_repo(tmp_path / "repo", {"a.txt": "alpha\n"})
    result = run_streamed(
        server.url,
        "--context-window",
        "10000000",
        "--max-steps",
        "500",
        "--budget",
        "100000000",
        "send broken calls",
        cwd=repo,
        home=tmp_path / "home",
        timeout=300,
    )

    finished = [e for e in result.events if e["type"] == "tool.finished"]
    errors = [e for e in finished if not e["ok"]]
    crashes = [e for e in result.events if e["type"] == "error"]
    not_tool_errors = sorted(
        {e["output"].splitlines()[0][:120] for e in errors if e["output"].startswith("Error (")}
    )
    print(f"\nmalformed calls: {len(calls)}, error results: {len(errors)}, crashes: {len(crashes)}")
    for line in not_tool_errors:
        print(f"  an error that is not a ToolError: {line}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert crashes == [], crashes
    assert len(finished) == len(calls) and len(errors) == len(calls), [
        e["output"][:80] for e in finished if e["ok"]
    ]
    assert result.events[-1]["status"] == "completed"
    assert result.events[-1]["final_message"] == "Done with the broken calls."
    assert all("times in a row" not in e["output"] for e in errors)
    # the model saw every error as the result of its call
    tool_messages = [m for m in server.requests[-1].messages if m["role"] == "tool"]
    assert len(tool_messages) == len(calls)
    assert all(m["content"].startswith("Error") for m in tool_messages)
    assert not (repo / "n.txt").exists() and not (repo / "big.txt").exists()


def test_lone_surrogates_from_the_provider_do_not_crash(scripted_server, tmp_path):
    """A provider's stream may carry lone UTF-16 surrogates (escaped in its JSON): not text, not a crash."""
    server = scripted_server(
        [
            Reply(
                tool_calls=[ScriptedToolCall(name="read_file", arguments='{"path": "\ud800.txt"}')]
            ),
            Reply(text="half an emoji: \udc00"),
        ]
    )
    repo = git_repo(tmp_path / "repo", {"a.txt": "alpha\n"})
    result = run_streamed(
        server.url,
        "read it",
        cwd=repo,
        home=tmp_path / "home",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert [e["ok"] for e in result.events if e["type"] == "tool.finished"] == [False]
    assert result.events[-1]["status"] == "completed"
    assert result.events[-1]["final_message"].startswith("half an emoji: ")
