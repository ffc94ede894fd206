"""Testing aids that ship with keel: a scripted OpenAI-compatible server over real HTTP."""
