"""Humans in the loop: labelling tasks made from a judged run, the queue that chooses what
each annotator labels next (by the judge's uncertainty, with known probabilities), and the way
the labels become the run's calibration.

`task` builds a task and reads a pair's blinded texts; `store` keeps the task, its queue and
every label; `session` serves an annotator pair after pair; `sample` turns the labels given so
far into the run's human labels; `status` says where the task stands and whether more labels
would change the decision; `offline` exports pairs to a file and imports labels from it.
"""
