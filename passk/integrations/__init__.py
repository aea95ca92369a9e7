"""passk inside other tools: the pytest plugin and the Inspect AI extension."""
