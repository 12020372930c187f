"""The page as a list of blocks, rendered twice: Markdown, and self-contained HTML (figures
embedded as data URIs, no network)."""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass

from judge.rundir import figure_link


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    alt: str


@dataclass(frozen=True)
class Quote:
    """Text nobody vetted (a candidate's output, a judge's reasoning), shown verbatim and
    inert: in Markdown a fenced block whose fence is longer than any backtick run in the text
    (so the text cannot close it), in HTML an escaped, bidi-isolated <pre>."""

    text: str


Block = Heading | Para | Bullets | Table | Figure | Quote


def quote_fence(text: str) -> str:
    """The Markdown fence of a `Quote` of `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


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
                *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows),
            ]
            out.append("\n".join(lines) + "\n")
        elif isinstance(block, Quote):
            fence = quote_fence(block.text)
            out.append(f"{fence}text\n{block.text}\n{fence}\n")
        else:
            out.append(f"![{block.alt}]({figure_link(block.name)})\n")
    return "\n".join(out)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:980px;margin:24px auto;
padding:0 16px;color:#1a1a1a}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;border-bottom:1px solid #ccc;margin-top:22px}
h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:12.5px}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
img{max-width:100%;display:block;margin:6px 0}ul{margin:4px 0 8px;padding-left:20px}
h4{font-size:13.5px;margin:14px 0 4px}
pre.quote{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate;max-height:18em;
overflow:auto;margin:2px 0 8px;padding:4px 8px;background:#f6f6f6;border-left:3px solid #bbb;
font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
""".strip()


def to_html(blocks: list[Block], title: str) -> str:
    esc = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
    ]
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            out.append(f"<p>{esc(block.text)}</p>")
        elif isinstance(block, Bullets):
            out.append("<ul>" + "".join(f"<li>{esc(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{esc(h)}</th>" for h in block.header)
            body = "".join(
                "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in block.rows
            )
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif isinstance(block, Quote):
            # The parser drops a newline right after <pre>: this one, not the text's own.
            out.append(f'<pre class="quote">\n{esc(block.text)}</pre>')
        else:
            data = base64.b64encode(block.png).decode("ascii")
            out.append(f'<img alt="{esc(block.alt)}" src="data:image/png;base64,{data}">')
    out.append("</body></html>")
    return "\n".join(out) + "\n"
