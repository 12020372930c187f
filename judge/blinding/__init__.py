"""judge.blinding."""
