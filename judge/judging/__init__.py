"""judge.judging."""
