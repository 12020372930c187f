"""judge.analysis."""
