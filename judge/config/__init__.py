"""judge.config."""
