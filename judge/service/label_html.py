"""The labelling pages' HTML: server-rendered, self-contained (no CDN, no framework), usable
without JavaScript. A few lines of inline script (allowed by a per-response nonce) add the keys
1 / 2 / 3 / s and u, and hold the label buttons back until both responses have been shown.
Every untrusted text is escaped and shown as text.

The pair page fits one screen on a desktop: the question (and the instructions) compact at the
top, the two responses side by side below it, each in a pane that scrolls on its own, and the
answer bar (progress, reason, buttons) at the bottom. Below 800 px the panes stack and the page
scrolls."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from html import escape
from typing import Any

from fastapi.responses import HTMLResponse

from judge.labelling.session import Shown
from judge.labelling.task import Candidate

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1d1d1b}
header{display:flex;gap:1em;align-items:center;padding:.5em 1.2em;background:#1d1d1b;color:#fff}
header .who{margin-left:auto;opacity:.8}
header form{margin:0}header button{padding:.15em .7em;margin:0}
main{max-width:1200px;margin:0 auto;padding:1em 1.2em 3em}
progress{width:100%;height:6px;margin:.2em 0;accent-color:#3a7d44}
.box{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:.6em 0}
h2{font-size:1em;margin:.2em 0 .4em}
pre.text{white-space:pre-wrap;word-wrap:break-word;font:inherit;margin:0}
.turn{color:#555;border-left:3px solid #ccc;padding-left:.6em;margin:.4em 0}
button{font:inherit;padding:.45em .9em;margin:.2em .3em .2em 0;border:1px solid #888;
border-radius:5px;background:#fff;cursor:pointer}
button.primary{border-color:#3a7d44}
button[aria-disabled=true]{opacity:.5;cursor:not-allowed}
kbd{font:12px ui-monospace,monospace;border:1px solid #999;border-radius:3px;padding:0 .3em;
background:#eee}
input[type=text],input[type=password]{font:inherit;padding:.4em;width:min(40em,90%)}
.note{color:#555}.error{color:#a11}.hint{color:#8a5a00;font-weight:600}
"""

_FIT = """
body.fit{height:100vh;height:100dvh;display:flex;flex-direction:column;overflow:hidden}
body.fit main{flex:1;min-height:0;width:100%;max-width:1400px;box-sizing:border-box;
padding:.6em 1.2em;display:flex;flex-direction:column;gap:.6em}
body.fit .box{margin:0}
.top{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:.8em;align-items:start}
.top>.box{max-height:24vh;overflow:auto;padding:.5em .9em}
.top summary{cursor:pointer;font-weight:600}
.pair{flex:1;min-height:0;display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);
gap:.8em}
.pane{overflow:auto;min-height:0;padding-top:0}
.pane h2{position:sticky;top:0;background:#fff;margin:0;padding:.6em 0 .4em}
.pane .mark{font-weight:400;color:#8a5a00}.pane[data-seen] .mark{color:#3a7d44}
.bar{border-top:1px solid #ddd;padding-top:.4em}
.bar .status{display:flex;gap:1em;align-items:baseline;flex-wrap:wrap}
.bar .status p{margin:0}
.bar form{display:inline}
.bar input[type=text]{width:min(22em,100%);margin-right:.4em}
@media (max-width:800px){
body.fit{height:auto;overflow:visible;display:block}
.top,.pair{grid-template-columns:minmax(0,1fr)}
.top>.box{max-height:none}
.pane{max-height:70vh}
.bar{position:sticky;bottom:0;background:#f6f6f4;padding-bottom:.4em}
}
"""

_KEYS = """
(function () {
  var keys = {}, sent = false;
  document.querySelectorAll('button[data-key]').forEach(function (b) { keys[b.dataset.key] = b; });
  document.addEventListener('submit', function () { sent = true; });
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || sent) return;
    var tag = e.target && e.target.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA') {
      if (e.key === 'Escape') { e.target.blur(); }
      return;
    }
    var button = keys[e.key.toLowerCase()];
    if (button) { e.preventDefault(); button.click(); }
  });
})();
"""

# The server cannot see scrolling: this rule lives here only (docs/labelling.md says so).
_SEEN = """
(function () {
  var panes = [].slice.call(document.querySelectorAll('.pane'));
  var hint = document.getElementById('hint');
  var gated = document.querySelectorAll('button[data-label]');
  var bar = document.querySelector('.bar');
  function atEnd(pane) {
    // The pane's end is on screen: scrolled to it, and above the (narrow screens: sticky) bar.
    var box = pane.getBoundingClientRect();
    var limit = Math.min(window.innerHeight, bar.getBoundingClientRect().top);
    var scrolled = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 2;
    return scrolled && box.bottom <= limit + 1 && box.bottom >= 0;
  }
  function ready() {
    panes.forEach(function (pane) {
      if (!pane.hasAttribute('data-seen') && atEnd(pane)) { pane.setAttribute('data-seen', ''); }
      pane.querySelector('.mark').textContent =
        pane.hasAttribute('data-seen') ? '· read' : '· scroll to its end';
    });
    var all = panes.every(function (pane) { return pane.hasAttribute('data-seen'); });
    gated.forEach(function (b) { b.setAttribute('aria-disabled', all ? 'false' : 'true'); });
    if (all) { hint.hidden = true; }
    return all;
  }
  panes.forEach(function (p) { p.addEventListener('scroll', ready, {passive: true}); });
  window.addEventListener('scroll', ready, {passive: true});
  window.addEventListener('resize', ready);
  document.addEventListener('click', function (e) {
    var button = e.target.closest && e.target.closest('button[data-label]');
    if (button && !ready()) { e.preventDefault(); hint.hidden = false; }
  });
  ready();
})();
"""


def _headers(nonce: str) -> dict[str, str]:
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        "Cache-Control": "no-store",
        # same-origin, not no-referrer: with no-referrer the browser sends `Origin: null` on
        # the page's own form posts, which the cross-site check must refuse.
        "Referrer-Policy": "same-origin",
        "X-Content-Type-Options": "nosniff",
    }


def html_response(render: Callable[[str], str], status: int = 200) -> HTMLResponse:
    """The page `render(nonce)` writes, with the headers that nonce goes in."""
    nonce = secrets.token_urlsafe(16)
    return HTMLResponse(render(nonce), status_code=status, headers=_headers(nonce))


def page(
    title: str,
    body: str,
    nonce: str,
    *,
    who: str | None = None,
    logout: str = "",
    script: str = "",
    style: str = "",
    fit: bool = False,
) -> str:
    """The shell every labelling page shares. `fit`: the page is one screen (the pair page)."""
    head = f'<span class="who">{escape(who)}</span>{logout}' if who else ""
    scripts = f'<script nonce="{nonce}">{script}</script>' if script else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f'<title>{escape(title)}</title><style nonce="{nonce}">{_STYLE}{_FIT}{style}</style>'
        f"</head><body{' class=fit' if fit else ''}><header><strong>judge</strong>"
        f"<span>{escape(title)}</span>{head}</header><main>{body}</main>{scripts}</body></html>"
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
    return page("Labelling", body, nonce, who=who, logout=_logout_form(), script=_KEYS)


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


def _top(shown: Shown, instructions: str) -> str:
    """The question (and reference) beside the instructions, each capped and scrolling."""
    reference = f"<h2>Reference answer</h2>{_text(shown.reference)}" if shown.reference else ""
    return (
        '<div class="top">'
        f'<section class="box" id="question"><h2>Question</h2>{_prompt(shown.prompt)}'
        f"{reference}</section>"
        # Open on the first pair only: afterwards it would take the question's room.
        f'<details class="box" id="instructions"{" open" if shown.done == 0 else ""}>'
        f"<summary>Instructions</summary>{_text(instructions)}</details></div>"
    )


def _pane(number: int, candidate: Candidate) -> str:
    earlier = (
        "<details><summary>Earlier turns of this conversation</summary>"
        f"{_messages(candidate.context)}</details>"
        if candidate.context
        else ""
    )
    return (
        f'<section class="box pane" id="response-{number}" tabindex="0" '
        f'aria-label="Response {number}"><h2>Response {number} <span class="mark"></span></h2>'
        f"{earlier}{_text(candidate.output)}</section>"
    )


def _choice(value: str, key: str, label: str, *, primary: bool = True) -> str:
    kind = ' class="primary"' if primary else ""
    return (
        f'<button{kind} type="submit" name="choice" value="{value}" data-key="{key}" '
        f"data-label><kbd>{key}</kbd> {label}</button>"
    )


def _bar(shown: Shown, error: str | None) -> str:
    share = 0 if shown.pool == 0 else min(100, round(100 * shown.done / shown.pool))
    alert = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    return (
        '<div class="bar"><div class="status">'
        f'<p id="progress">{shown.done} labelled · pair {shown.done + 1} of up to {shown.pool}</p>'
        '<p id="hint" class="hint" role="status" hidden>Read both responses first: scroll '
        f"each to its end.</p>{alert}</div>"
        f'<progress value="{shown.done}" max="{max(shown.pool, 1)}" '
        f'aria-label="{share}% of the queue labelled"></progress>'
        '<form class="answer" method="post" action="/label/answer">'
        f'<input type="hidden" name="assignment" value="{escape(shown.assignment_id)}">'
        # The form's first submit button is its default: disabled, Enter in the reason field
        # submits nothing (it would otherwise answer "1").
        '<button type="submit" disabled hidden></button>'
        '<input type="text" name="reason" maxlength="300" aria-label="reason" '
        'placeholder="Reason (optional, one line)">'
        + _choice("1", "1", "Response 1 is better")
        + _choice("2", "2", "Response 2 is better")
        + _choice("tie", "3", "Tie", primary=False)
        + '<button type="submit" name="choice" value="skip" data-key="s"><kbd>s</kbd> Skip'
        "</button></form>" + (_undo_form() if shown.done else "") + "</div>"
    )


def pair(nonce: str, who: str, shown: Shown, instructions: str, error: str | None = None) -> str:
    body = (
        _top(shown, instructions)
        + f'<div class="pair">{_pane(1, shown.first)}{_pane(2, shown.second)}</div>'
        + _bar(shown, error)
    )
    return page(
        "Labelling", body, nonce, who=who, logout=_logout_form(), script=_SEEN + _KEYS, fit=True
    )
