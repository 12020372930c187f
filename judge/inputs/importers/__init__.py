"""Other tools' output files read into the project's items and responses tables (`judge
import`, a config's `data.source`): Inspect AI logs (`inspect_logs`), promptfoo results
(`promptfoo_results`), lm-evaluation-harness samples (`lm_eval_samples`), Hugging Face
datasets (`hf_dataset`); and OpenAI Evals testing criteria read into rubrics
(`openai_criteria`). `written_tables` writes what they read and counts what they could not."""

from judge.exports import lazy_exports

_EXPORTS = {
    "import_tables": "judge.inputs.importers.importing",
    "with_imported_data": "judge.inputs.importers.importing",
    "ImportReport": "judge.inputs.importers.written_tables",
    "import_rubrics": "judge.inputs.importers.openai_criteria",
    "RubricImport": "judge.inputs.importers.openai_criteria",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
