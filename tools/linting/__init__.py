"""Support for the lint tool: linters run as processes and tree-sitter syntax checks."""
