"""The labelling page's HTML: server-rendered, self-contained (no CDN, no framework), usable
without JavaScript; a few lines of inline script (allowed by a per-response nonce) add the
keys 1 / 2 / 3 / s and u. Every untrusted text is escaped and shown as text."""

from __future__ import annotations

from html import escape
from typing import Any

from judge.labelling.session import Shown

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1d1d1b}
header{display:flex;gap:1em;align-items:center;padding:.6em 1.2em;background:#1d1d1b;color:#fff}
header .who{margin-left:auto;opacity:.8}
main{max-width:1200px;margin:0 auto;padding:1em 1.2em 3em}
progress{width:100%;height:6px;margin:.2em 0 1em;accent-color:#3a7d44}
.box{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:.6em 0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}
h2{font-size:1em;margin:.2em 0 .4em}
pre.text{white-space:pre-wrap;word-wrap:break-word;font:inherit;margin:0}
.turn{color:#555;border-left:3px solid #ccc;padding-left:.6em;margin:.4em 0}
form.answer{position:sticky;bottom:0;background:#f6f6f4;padding:.8em 0;border-top:1px solid #ddd}
button{font:inherit;padding:.45em .9em;margin:.2em .3em .2em 0;border:1px solid #888;
border-radius:5px;background:#fff;cursor:pointer}
button.primary{border-color:#3a7d44}
kbd{font:12px ui-monospace,monospace;border:1px solid #999;border-radius:3px;padding:0 .3em;
background:#eee}
input[type=text],input[type=password]{font:inherit;padding:.4em;width:min(40em,90%)}
.note{color:#555}.error{color:#a11}
"""

_SCRIPT = """
document.addEventListener('keydown', function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var typing = e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'TEXTAREA');
  if (typing) {
    if (e.key === 'Enter') { e.preventDefault(); }
    if (e.key === 'Escape') { e.target.blur(); }
    return;
  }
  var button = document.querySelector('button[data-key="' + e.key.toLowerCase() + '"]');
  if (button) { e.preventDefault(); button.click(); }
});
"""


def page(title: str, body: str, nonce: str, *, who: str | None = None) -> str:
    head = f'<span class="who">{escape(who)}</span>' if who else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f'<title>{escape(title)}</title><style nonce="{nonce}">{_STYLE}</style></head>'
        f"<body><header><strong>judge</strong><span>{escape(title)}</span>{head}</header>"
        f'<main>{body}</main><script nonce="{nonce}">{_SCRIPT}</script></body></html>'
    )


def login(nonce: str, error: str | None = None) -> str:
    message = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    body = (
        '<div class="box"><h2>Log in with your annotator token</h2>'
        f"{message}"
        '<form method="post" action="/label/login">'
        '<p><input type="password" name="token" autocomplete="off" required autofocus '
        'aria-label="annotator token" placeholder="jda_..."></p>'
        '<p><button class="primary" type="submit">Start labelling</button></p></form>'
        '<p class="note">The token came from the run\'s owner. It opens your labelling queue '
        "and nothing else.</p></div>"
    )
    return page("Labelling", body, nonce)


def message(nonce: str, who: str, title: str, text: str, *, undo: bool = False) -> str:
    undo_form = _undo_form() if undo else ""
    body = f'<div class="box"><h2>{escape(title)}</h2><p>{escape(text)}</p></div>{undo_form}'
    return page("Labelling", body + _logout_form(), nonce, who=who)


def _text(value: str) -> str:
    return f'<pre class="text">{escape(value)}</pre>'


def _messages(messages: list[dict[str, Any]]) -> str:
    return "".join(
        f'<div class="turn"><strong>{escape(str(m.get("role", "")))}</strong>'
        f"{_text(str(m.get('content', '')))}</div>"
        for m in messages
    )


def _prompt(prompt: str | list[dict[str, Any]]) -> str:
    return _text(prompt) if isinstance(prompt, str) else _messages(prompt)


def _undo_form() -> str:
    return (
        '<form method="post" action="/label/undo">'
        '<button type="submit" data-key="u" title="Undo your last label">'
        "<kbd>u</kbd> Undo last label</button></form>"
    )


def _logout_form() -> str:
    return (
        '<form method="post" action="/label/logout"><button type="submit">Log out</button></form>'
    )


def pair(nonce: str, who: str, shown: Shown, instructions: str, error: str | None = None) -> str:
    share = 0 if shown.pool == 0 else min(100, round(100 * shown.done / shown.pool))
    alert = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    reference = (
        f'<div class="box"><h2>Reference answer</h2>{_text(shown.reference)}</div>'
        if shown.reference
        else ""
    )
    columns = ""
    for number, candidate in ((1, shown.first), (2, shown.second)):
        earlier = (
            "<details><summary>Earlier turns of this conversation</summary>"
            f"{_messages(candidate.context)}</details>"
            if candidate.context
            else ""
        )
        columns += (
            f'<div class="box" id="response-{number}"><h2>Response {number}</h2>'
            f"{earlier}{_text(candidate.output)}</div>"
        )
    body = (
        f'<p id="progress">{shown.done} labelled · pair {shown.done + 1} of up to {shown.pool}</p>'
        f'<progress value="{shown.done}" max="{max(shown.pool, 1)}" '
        f'aria-label="{share}% of the queue labelled"></progress>'
        f"<details{' open' if shown.done == 0 else ''}><summary>Instructions</summary>"
        f'<div class="box">{_text(instructions)}</div></details>'
        f'{alert}<div class="box" id="question"><h2>Question</h2>{_prompt(shown.prompt)}</div>'
        f'{reference}<div class="pair">{columns}</div>'
        '<form class="answer" method="post" action="/label/answer">'
        f'<input type="hidden" name="assignment" value="{escape(shown.assignment_id)}">'
        '<p><input type="text" name="reason" maxlength="300" aria-label="reason" '
        'placeholder="Reason (optional, one line)"></p>'
        '<button class="primary" type="submit" name="choice" value="1" data-key="1">'
        "<kbd>1</kbd> Response 1 is better</button>"
        '<button class="primary" type="submit" name="choice" value="2" data-key="2">'
        "<kbd>2</kbd> Response 2 is better</button>"
        '<button type="submit" name="choice" value="tie" data-key="3"><kbd>3</kbd> Tie</button>'
        '<button type="submit" name="choice" value="skip" data-key="s"><kbd>s</kbd> Skip</button>'
        "</form>" + (_undo_form() if shown.done else "") + _logout_form()
    )
    return page("Labelling", body, nonce, who=who)
