"""judge.summary."""
