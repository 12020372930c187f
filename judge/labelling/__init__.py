"""Humans in the loop: labelling tasks made from a judged run, the queue that chooses what
each annotator labels next (by the judge's uncertainty, with known probabilities), and the way
the labels become the run's calibration.

`task` builds a task and reads a pair's blinded texts; `label_store` keeps the task, its queue and
every label; `session` serves an annotator pair after pair; `sample` turns the labels given so
far into the run's human labels; `status` says where the task stands and whether more labels
would change the decision; `offline` exports pairs to a file and imports labels from it.
"""

from judge.exports import lazy_exports

_EXPORTS = {
    "create_task": "judge.labelling.task",
    "next_pair": "judge.labelling.session",
    "answer": "judge.labelling.session",
    "undo": "judge.labelling.session",
    "publish": "judge.labelling.sample",
    "task_status": "judge.labelling.status",
    "export_pairs": "judge.labelling.offline",
    "import_labels": "judge.labelling.offline",
    "LabelStore": "judge.labelling.label_store",
    "open_labelling": "judge.labelling.label_store",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
