"""`keel acp`: keel as an agent over the Agent Client Protocol (Zed, JetBrains IDEs, Neovim plugins).

A front end like the TUI and the headless printer: ACP requests become ops on a keel Session, its events
become ACP session updates. Imported only by `keel acp`, so `import keel` never loads the protocol package.
"""
