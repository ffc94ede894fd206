"""keel's core: the protocol, the session and its loop, the state folded from events, context and
budgets, the model stack, strategies, git services and the store. Front ends and harnesses import only its
public surface: keel.agent.core.api, protocol, session, settings, config, config_files and errors."""
