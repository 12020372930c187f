"""judge.store."""
