"""`python -m judge.cli`: the same entry point as the `judge` command."""

from judge.cli.main import main

main()
