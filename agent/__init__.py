"""keel.agent: the core (core/), its front ends (cli/, acp/; the TUI is tui/) and the run harnesses
(harness/)."""
