"""The model's plan: its todo checklist recorded as events, and plan mode, where only the read tools run."""
