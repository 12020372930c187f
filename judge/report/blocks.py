"""The page as a list of blocks, rendered twice: Markdown, and self-contained HTML (figures
embedded as data URIs, no network)."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from judge.store.rundir import figure_link
from judge.untrusted import inert

Tone = Literal["good", "warn", "bad", "plain"]


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str
    id: str | None = None
    """The HTML element's id (a place the first-screen test finds)."""


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Mark:
    """A verdict word (PASS, FAIL, UNTRUSTED): a coloured, bold badge in HTML, bold and in
    brackets in Markdown, so it reads the same without colour."""

    text: str
    tone: Tone


Cell = str | Mark


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Cell]]
    id: str | None = None


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    alt: str


@dataclass(frozen=True)
class Callout:
    """A line that must not be missed: boxed in its tone's colour in HTML, a quote in Markdown;
    `strong` sets the whole text in bold, `mark` puts a badge before it."""

    text: str
    tone: Tone
    id: str
    mark: Mark | None = None
    strong: bool = False


@dataclass(frozen=True)
class Details:
    """A section collapsed in HTML (`<details>`, `hint` on its closed line); in Markdown a
    section like any other, so report.md stays complete. `level`: its heading's (2 for a
    section, 3 or 4 inside one)."""

    heading: str
    hint: str
    blocks: list[Block]
    id: str | None = None
    level: int = 2


@dataclass(frozen=True)
class Row:
    """Blocks side by side in HTML (shrinking to fit the page's width, wrapping on a narrow
    window), one after another in Markdown: a chart beside its table keeps both on the first
    screen."""

    blocks: list[Block]
    id: str | None = None


@dataclass(frozen=True)
class Quote:
    """Text nobody vetted (a candidate's output, a judge's reasoning), shown verbatim and
    inert: in Markdown a fenced block whose fence is longer than any backtick run in the text
    (so the text cannot close it), in HTML an escaped, bidi-isolated <pre>."""

    text: str


Block = Heading | Para | Bullets | Table | Figure | Callout | Details | Row | Quote


def walk(blocks: list[Block]) -> Iterator[Block]:
    """Every block of the page in reading order, those inside a `Details` or a `Row` too."""
    for block in blocks:
        yield block
        if isinstance(block, Details | Row):
            yield from walk(block.blocks)


def figures(blocks: list[Block]) -> dict[str, bytes]:
    """Every figure of the page by name (report.md links each to its file)."""
    return {b.name: b.png for b in walk(blocks) if isinstance(b, Figure)}


def quote_fence(text: str) -> str:
    """The Markdown fence of a `Quote` of `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_mark(mark: Mark) -> str:
    return f"**[{mark.text}]**"


def _md_text(cell: Cell) -> str:
    return _md_mark(cell) if isinstance(cell, Mark) else _md_cell(cell)


def to_markdown(blocks: list[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {block.text}\n")
        elif isinstance(block, Para):
            out.append(f"{block.text}\n")
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {item}" for item in block.items) + "\n")
        elif isinstance(block, Table):
            lines = [
                "| " + " | ".join(_md_cell(h) for h in block.header) + " |",
                "|" + "---|" * len(block.header),
                *("| " + " | ".join(_md_text(c) for c in row) + " |" for row in block.rows),
            ]
            out.append("\n".join(lines) + "\n")
        elif isinstance(block, Callout):
            text = f"**{block.text}**" if block.strong else block.text
            mark = f"{_md_mark(block.mark)} " if block.mark else ""
            out.append(f"> {mark}{text}\n")
        elif isinstance(block, Details):
            out.append(f"{'#' * block.level} {block.heading}\n")
            out.append(to_markdown(block.blocks).rstrip("\n") + "\n")
        elif isinstance(block, Row):
            out.append(to_markdown(block.blocks).rstrip("\n") + "\n")
        elif isinstance(block, Quote):
            # Control and bidi characters as visible escapes: `cat report.md` must not run them.
            text = inert(block.text)
            fence = quote_fence(text)
            out.append(f"{fence}text\n{text}\n{fence}\n")
        else:
            out.append(f"![{block.alt}]({figure_link(block.name)})\n")
    return "\n".join(out)


# Badge colours: dark enough for white text (WCAG AA), after Okabe-Ito's green, orange and
# vermillion; the word on the badge carries the meaning without colour.
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1040px;margin:20px auto;
padding:0 16px;color:#1a1a1a}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;border-bottom:1px solid #ccc;margin:18px 0 6px}
h3{font-size:15px;margin-bottom:4px}p{margin:6px 0}
table{border-collapse:collapse;margin:6px 0 10px;font-size:12.5px}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
img{max-width:100%;display:block;margin:6px 0}ul{margin:4px 0 8px;padding-left:20px}
.mark{display:inline-block;font-weight:700;color:#fff;padding:0 7px;border-radius:4px;
letter-spacing:.03em;white-space:nowrap;background:#555}
.mark.good{background:#00704d}.mark.warn{background:#a35a00}.mark.bad{background:#b3400b}
.callout{margin:6px 0;padding:6px 10px;border-left:6px solid #555;background:#f3f3f3}
.callout.good{border-color:#00704d;background:#e8f4ee}
.callout.warn{border-color:#a35a00;background:#fbf0e2}
.callout.bad{border-color:#b3400b;background:#fbe9e1}
.callout.strong{font-size:16px;font-weight:600}.callout .mark{margin-right:8px}
#question{font-size:15px}
details>summary{cursor:pointer;margin-top:18px}
details>summary>:is(h2,h3,h4){display:inline;border:0}
details.h3>summary,details.h4>summary{margin-top:8px}details.h4{margin-left:4px}
details>summary .hint{color:#555;margin-left:6px}
.row{display:flex;gap:6px 14px;align-items:flex-start;margin:8px 0 2px}
.row>div{min-width:0;flex:0 1 auto}.row img{height:auto}.row img,.row table{margin:0}
@media (max-width:900px){.row{flex-wrap:wrap}}
h4{font-size:13.5px;margin:14px 0 4px}
pre.quote{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate;max-height:18em;
overflow:auto;margin:2px 0 8px;padding:4px 8px;background:#f6f6f6;border-left:3px solid #bbb;
font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
""".strip()


def _html_mark(mark: Mark) -> str:
    return f'<span class="mark {mark.tone}">{html.escape(mark.text)}</span>'


def _html_cell(cell: Cell) -> str:
    return _html_mark(cell) if isinstance(cell, Mark) else html.escape(cell)


def _id(value: str | None) -> str:
    return "" if value is None else f' id="{html.escape(value)}"'


def _html_blocks(blocks: list[Block]) -> list[str]:
    esc = html.escape
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            out.append(f"<p{_id(block.id)}>{esc(block.text)}</p>")
        elif isinstance(block, Bullets):
            out.append("<ul>" + "".join(f"<li>{esc(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{esc(h)}</th>" for h in block.header)
            body = "".join(
                "<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>"
                for row in block.rows
            )
            out.append(
                f"<table{_id(block.id)}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            )
        elif isinstance(block, Callout):
            classes = f"callout {block.tone}" + (" strong" if block.strong else "")
            mark = _html_mark(block.mark) if block.mark else ""
            out.append(f'<div class="{classes}"{_id(block.id)}>{mark}{esc(block.text)}</div>')
        elif isinstance(block, Details):
            h = f"h{block.level}"
            hint = f'<span class="hint">{esc(block.hint)}</span>' if block.hint else ""
            out.append(
                f'<details class="{h}"{_id(block.id)}><summary><{h}>{esc(block.heading)}</{h}>'
                f"{hint}</summary>"
            )
            out += _html_blocks(block.blocks)
            out.append("</details>")
        elif isinstance(block, Row):
            cells = "".join(f"<div>{''.join(_html_blocks([b]))}</div>" for b in block.blocks)
            out.append(f'<div class="row"{_id(block.id)}>{cells}</div>')
        elif isinstance(block, Quote):
            # The parser drops a newline right after <pre>: this one, not the text's own.
            out.append(f'<pre class="quote">\n{esc(block.text)}</pre>')
        else:
            data = base64.b64encode(block.png).decode("ascii")
            out.append(f'<img alt="{esc(block.alt)}" src="data:image/png;base64,{data}">')
    return out


def to_html(blocks: list[Block], title: str) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        *_html_blocks(blocks),
        "</body></html>",
    ]
    return "\n".join(out) + "\n"
