"""keel's core: the agent loop, its protocol, the model layer and the runners that drive it."""
