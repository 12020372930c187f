"""calibration: pure statistics for judge evaluation (agreement, comparison, ranking).

Imports nothing from `judge`; knows nothing of LLMs.
"""
