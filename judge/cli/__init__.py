"""judge.cli."""
