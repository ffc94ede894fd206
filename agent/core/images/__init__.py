"""Images for models that take them: which models do, the events that attach them, and how the history holds them."""
