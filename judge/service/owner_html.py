"""The owner's page's HTML (`judge.service.owner_page`): the run list, a run's labelling task
(its creation form, or its progress, annotators and calibration) and the login form. Built on
the labelling pages' shell (`label_html.page`); no script. Every state-changing form carries
the session's form key. Untrusted text (run names, details, instructions) is escaped."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from judge.labelling.status import AnnotatorCount
from judge.labelling.task import TaskSpec
from judge.service.label_html import page
from judge.service.labelling import AnnotatorInfo, AnnotatorToken, Labelling
from judge.service.models import RunInfo

TITLE = "Labelling tasks"

_STYLE = """
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #e4e4e0;vertical-align:top}
th{font-weight:600;background:#efefeb}
td.n{text-align:right;font-variant-numeric:tabular-nums}
td form{display:inline}td button{padding:.15em .6em;margin:0}
label{display:block;margin:.35em 0}
label span{display:inline-block;min-width:11em}
input[type=number]{font:inherit;padding:.3em;width:8em}
select{font:inherit;padding:.3em}
textarea{font:inherit;width:min(48em,95%);height:6em}
code.token{display:block;font:14px ui-monospace,monospace;background:#fffbe6;padding:.6em;
border:1px solid #e0c96b;border-radius:4px;word-break:break-all}
ul.parts{margin:.3em 0;padding-left:1.2em}
"""


@dataclass(frozen=True)
class Listed:
    """A run in the list: what `GET /v1/runs` says of it, and whether it has a task."""

    info: RunInfo
    has_task: bool


def _page(nonce: str, body: str, who: str | None = None) -> str:
    logout = (
        '<form method="post" action="/owner/logout"><button type="submit">Log out</button></form>'
    )
    return page(TITLE, body, nonce, who=who, logout=logout if who else "", style=_STYLE)


def _key(form_key: str) -> str:
    return f'<input type="hidden" name="form_key" value="{escape(form_key)}">'


def login(nonce: str, error: str | None = None) -> str:
    message = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    body = (
        '<div class="box"><h2>Log in with your API token</h2>'
        f"{message}"
        '<form method="post" action="/owner/login">'
        '<p><input type="password" name="token" autocomplete="off" required autofocus '
        'aria-label="API token" placeholder="jdg_..."></p>'
        '<p><button class="primary" type="submit">Log in</button></p></form>'
        '<p class="note">The token the runs were submitted with (<code>judge tokens create'
        "</code>). Here it makes labelling tasks of its finished runs and annotator tokens "
        "for them; annotator tokens do not open this page.</p></div>"
    )
    return _page(nonce, body)


def problem(nonce: str, who: str, title: str, detail: str) -> str:
    body = (
        f'<div class="box"><h2>{escape(title)}</h2><p role="alert">{escape(detail)}</p>'
        '<p><a href="/owner">All runs</a></p></div>'
    )
    return _page(nonce, body, who)


def runs(nonce: str, who: str, form_key: str, listed: list[Listed], total: int) -> str:
    rows = "".join(
        f'<tr data-run="{escape(r.info.id)}"><td><a href="/owner/runs/{quote(r.info.id)}">'
        f"{escape(r.info.name)}</a></td><td><code>{escape(r.info.id)}</code></td>"
        f"<td>{escape(r.info.owner)}</td>"
        f"<td>{escape(_when(r.info.finished_at))}</td>"
        f"<td>{'labelling' if r.has_task else 'no task yet'}</td></tr>"
        for r in listed
    )
    more = (
        f'<p class="note">The newest {len(listed)} of {total} finished runs.</p>'
        if total > len(listed)
        else ""
    )
    body = (
        '<div class="box"><h2>Finished runs</h2>'
        + (
            "<table><thead><tr><th>Name</th><th>Run</th><th>Owner</th><th>Finished</th>"
            f"<th>Labelling</th></tr></thead><tbody>{rows}</tbody></table>{more}"
            if listed
            else "<p>No finished run yet: a labelling task is made from a finished run.</p>"
        )
        + "</div>"
    )
    return _page(nonce, body, who)


def _when(moment: object) -> str:
    return "" if moment is None else str(moment)[:19].replace("T", " ")


def _number(name: str, label: str, value: object, attrs: str = "") -> str:
    shown = "" if value is None else escape(str(value))
    return (
        f'<label><span>{label}</span><input type="number" name="{name}" value="{shown}" '
        f'aria-label="{name}" {attrs}></label>'
    )


def _create_form(run_id: str, form_key: str) -> str:
    """The task's options, as `POST /v1/runs/{id}/labelling` takes them (its defaults)."""
    d = TaskSpec()
    modes = "".join(
        f'<option value="{m}"{" selected" if m == d.mode else ""}>{m}</option>'
        for m in ("active", "uniform")
    )
    return (
        f'<form class="box" method="post" action="/owner/runs/{quote(run_id)}/labelling">'
        f"<h2>Create a labelling task</h2>{_key(form_key)}"
        f'<label><span>Mode</span><select name="mode" aria-label="mode">{modes}</select> '
        '<span class="note">active: pairs the judge is unsure of first</span></label>'
        + _number("size", "Pairs at most", d.size, 'min="1" placeholder="all"')
        + _number("overlap", "Annotators per pair", d.overlap, 'min="1" max="10"')
        + '<label><span>Only items where</span><input type="text" name="where" '
        'aria-label="where" placeholder="category=writing,roleplay; turn=1"></label>'
        "<details><summary>More options</summary>"
        + _number("uniform_share", "Uniform share", d.uniform_share, 'step="any"')
        + _number("floor", "Floor", d.floor, 'step="any"')
        + _number("max_skips", "Skips before a pair is dropped", d.max_skips, 'min="1"')
        + _number("seed", "Seed", d.seed, 'min="0"')
        + '<label><span>Instructions</span><textarea name="instructions" '
        'aria-label="instructions" placeholder="Default: the rubric\'s question and criteria">'
        "</textarea></label></details>"
        '<p><button class="primary" type="submit">Create the task</button></p></form>'
    )


def _calibration(task: Labelling, info: RunInfo) -> str:
    status = task.task
    if task.analysis_error:
        now = f"The last analysis with the labels failed: {task.analysis_error}"
    elif task.analysing:
        now = "Being recomputed with the newest labels (reload to see it)."
    elif status.labels == 0:
        now = "No labels yet: the judge is not calibrated by this task."
    else:
        plural = "" if status.labels == 1 else "s"
        now = f"Up to date: it includes the sample's {status.labels} label{plural}."
    trust = (
        f"<p>Judge: <strong>{escape(info.answer.judge)}</strong> — "
        f"{escape(info.answer.judge_reason)}</p>"
        if info.answer is not None
        else ""
    )
    parts = "".join(
        f"<li>{escape(p.name)}: {'settled' if p.settled else 'open'}: {escape(p.message)}</li>"
        for p in status.stopping.parts
    )
    return (
        f'<div class="box" id="calibration"><h2>Calibration</h2><p id="calibration-now">'
        f"{escape(now)}</p>{trust}<p>{escape(status.stopping.message)}</p>"
        f'<ul class="parts">{parts}</ul></div>'
    )


def _annotator_rows(task: Labelling, run_id: str, form_key: str) -> str:
    """One row per name: a token made here, or labels given under it (an imported file)."""
    tokens: dict[str, AnnotatorInfo] = {a.name: a for a in task.annotators}
    counts: dict[str, AnnotatorCount] = {c.name: c for c in task.task.by_annotator}
    rows = ""
    for name in [*tokens, *(n for n in counts if n not in tokens)]:
        token, count = tokens.get(name), counts.get(name)
        if token is None:
            state = "no token (labels from a file)"
        elif token.revoked_at is not None:
            state = f"revoked {_when(token.revoked_at)}"
        else:
            state = (
                f'live <form method="post" action="/owner/runs/{quote(run_id)}/annotators/'
                f'{quote(name)}/revoke">{_key(form_key)}'
                f'<button type="submit" aria-label="revoke {escape(name)}">Revoke</button></form>'
            )
        numbers = (count.labels, count.skips, count.undone) if count else (0, 0, 0)
        rows += (
            f'<tr data-annotator="{escape(name)}"><td>{escape(name)}</td>'
            f'<td class="n labels">{numbers[0]}</td><td class="n">{numbers[1]}</td>'
            f'<td class="n">{numbers[2]}</td>'
            f"<td>{escape(_when(count.last_label_at if count else None))}</td>"
            f'<td class="state">{state}</td></tr>'
        )
    return rows


def _task(task: Labelling, info: RunInfo, form_key: str) -> str:
    s = task.task
    spec = s.spec
    # Left: no label yet and not given up on (a pair on someone's screen is left too).
    left = s.pool - s.labelled - s.ahead - s.skipped
    progress = (
        f'<div class="box" id="progress"><h2>Progress</h2><p><strong id="labels-total">'
        f"{s.labels}</strong> labels on {s.labelled} of {s.pool} pairs · "
        f'<strong id="pairs-left">{left}</strong> pairs left ({s.waiting} on someone\'s '
        f"screen) · {s.skipped} skipped by everyone asked · {s.ahead} labelled ahead</p>"
        f'<progress value="{s.pool - left}" max="{max(s.pool, 1)}"></progress>'
        f'<p class="note">Task {escape(s.task_id)}: {spec.mode}, overlap {spec.overlap}'
        f"{'' if spec.size is None else f', at most {spec.size} pairs'}, seed {spec.seed}. "
        "Reload the page for the latest numbers.</p></div>"
    )
    rows = _annotator_rows(task, info.id, form_key)
    annotators = (
        '<div class="box" id="annotators"><h2>Annotators</h2>'
        + (
            "<table><thead><tr><th>Name</th><th>Labels</th><th>Skips</th><th>Undone</th>"
            f"<th>Last label</th><th>Token</th></tr></thead><tbody>{rows}</tbody></table>"
            if rows
            else "<p>None yet: issue a token for each person who labels.</p>"
        )
        + f'<form method="post" action="/owner/runs/{quote(info.id)}/annotators">'
        f'{_key(form_key)}<p><input type="text" name="name" maxlength="100" required '
        'aria-label="annotator name" placeholder="name, e.g. ana">'
        '<button class="primary" type="submit">Issue a token</button></p></form></div>'
    )
    return progress + _calibration(task, info) + annotators


def _issued(issued: AnnotatorToken, label_url: str) -> str:
    return (
        '<div class="box" id="issued" role="status">'
        f"<h2>Token for {escape(issued.name)}</h2>"
        "<p>Shown this once: copy it now and give it to the annotator, with the page "
        f'<a href="{escape(label_url)}">{escape(label_url)}</a>. It opens that page with '
        "their own queue, and nothing else.</p>"
        f'<code class="token" id="new-token">{escape(issued.token)}</code></div>'
    )


def run_page(
    nonce: str,
    who: str,
    form_key: str,
    info: RunInfo,
    task: Labelling | None,
    *,
    label_url: str,
    error: str | None = None,
    issued: AnnotatorToken | None = None,
) -> str:
    alert = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    head = (
        '<p><a href="/owner">All runs</a></p>'
        f'<div class="box"><h2>{escape(info.name)}</h2><p><code>{escape(info.id)}</code> · '
        f"{escape(info.status)} · owner {escape(info.owner)}</p></div>"
    )
    if task is not None:
        main = _task(task, info, form_key)
    elif info.status == "finished":
        main = _create_form(info.id, form_key)
    else:
        main = (
            f'<div class="box"><p>The run is {escape(info.status)}: a labelling task is '
            "made from a finished run.</p></div>"
        )
    extra = _issued(issued, label_url) if issued is not None else ""
    return _page(nonce, head + alert + extra + main, who)
