"""`python -m keel`: the `keel` command, with the same flags (for an install without the console script)."""

from __future__ import annotations

import sys

from keel.agent.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
