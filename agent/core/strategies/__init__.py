"""What differs by kind of model: one strategy per kind (capable.py, small.py) behind base.py's interface, chosen by
choose.py from the session's profile; the loop (agent/core/loop.py) is the same for every model."""
