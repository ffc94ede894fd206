"""The line a reply names a file on before its content: `FILE: ledger/money.py`, `ledger/money.py:`, `**money.py**`,
`# money.py` (the whole-file reader, the search/replace block reader and the prose reader agree on it)."""

from __future__ import annotations

import re

# the heading's text, its path as group 1 (no anchors: each reader puts it in its own pattern)
FILE_HEADING = r"(?:file(?:name)?:\s*|#+\s*|\*\*)?`?([\w./-]+\.\w+)`?(?:\*\*)?:?"
# a line that is only a heading, or a fence's info naming the file ("```python money.py")
FILE_LINE = re.compile(
    rf"^[ \t]*(?:```[\w+-]*[ \t]+)?{FILE_HEADING}[ \t]*$", re.MULTILINE | re.IGNORECASE
)
