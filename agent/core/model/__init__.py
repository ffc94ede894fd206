"""The model transport stack: one streaming chat call, direct HTTP or litellm or the embedded model."""
