"""judge.rubric."""
