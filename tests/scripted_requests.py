"""The requests the scripted server's tests send it: one user message, one tool, an edit's arguments."""

from __future__ import annotations

USER = [{"role": "user", "content": "Fix the failing test in calc.py, please."}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]
EDIT_ARGS = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}
