"""Screenshot a run's `report.html` in headless Chromium (Debian package `chromium`).

    python scripts/screenshot_report.py runs/mt-bench-demo [--out report.png] [--height 7000]
    python scripts/screenshot_report.py runs/mt-bench-demo --first-screen [--out first.png]

The page is opened from disk (file://) with background networking off, so a screenshot that
shows the figures proves the report is self-contained. Prints the PNG's path.

`--first-screen` shoots the first screen (1280x800 unless --width/--height say otherwise) and
prints, as JSON, where the decision's elements are laid out in that window: the stand-in
banner, the question, the answer, the trust badge, each gate's PASS/FAIL, the canaries' line
and its badge, the ranking chart, its table and the sentence under them; and the page's whole
height, closed sections closed (`report.blocks` gives them their ids and classes).
Headless Chromium has no layout query on the command line, so a copy of the page
gets a probe script that measures each element with `getBoundingClientRect` once the page has
loaded and writes the result into the DOM, which `--dump-dom` prints. The report itself has no
script (its Content-Security-Policy forbids one); only the probed copy does.

Positions are CSS pixels from the top of the page (nothing is scrolled). In `--dump-dom` mode
Chromium's viewport is shorter than `--window-size` (measured: 1280x657 for 1280,800) while the
`--screenshot` is the full 1280x800; the page's layout depends on its width only (no
viewport-height units), so an element whose bottom is at most 800 is in the screenshot.
"""

from __future__ import annotations

import argparse
import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def find_chromium() -> str | None:
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _chromium(page: Path, width: int, height: int, *action: str) -> str:
    """Run headless Chromium on `page` in a `width` x `height` window; its stdout."""
    browser = find_chromium()
    if browser is None:
        raise SystemExit("no Chromium found: apt-get install chromium (or set CHROMIUM=path)")
    with tempfile.TemporaryDirectory(prefix="judge-chromium-") as profile:
        command = [
            browser,
            *_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            *action,
            page.resolve().as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def screenshot(html: Path, out: Path, *, width: int = 1100, height: int = 7000) -> Path:
    out.unlink(missing_ok=True)
    _chromium(html, width, height, f"--screenshot={out.resolve()}")
    if not out.exists():
        raise SystemExit(f"chromium wrote no screenshot to {out}")
    return out


# Runs on load (figures decoded, layout final); appends its JSON as the body's last element,
# below everything it measured.
_PROBE = """<script>
addEventListener("load", function () {
  function box(el) {
    var r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, text: el.textContent.trim()};
  }
  function one(selector) {
    var el = document.querySelector(selector);
    return el ? box(el) : null;
  }
  var gates = [];
  document.querySelectorAll("#gates .mark").forEach(function (mark) {
    var row = box(mark.closest("tr"));
    gates.push({top: row.top, bottom: row.bottom, text: row.text,
                mark: box(mark).text, mark_bottom: box(mark).bottom});
  });
  var out = {
    viewport: [innerWidth, innerHeight],
    page_height: document.documentElement.scrollHeight,
    stand_in: one("#stand-in"),
    question: one("#question"),
    answer: one("#answer"),
    trust: one("#trust .mark"),
    no_gates: one("p#gates"),
    gates: gates,
    canaries: one("#canary-line"),
    canaries_mark: one("#canary-line .mark"),
    ranking_chart: one("#ranking img"),
    ranking_table: one("#ranking table"),
    ranking_note: one("#ranking-note")
  };
  var pre = document.createElement("pre");
  pre.id = "first-screen-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""
_PROBED = re.compile(r'<pre id="first-screen-probe">(.*?)</pre>', re.S)


def first_screen(html: Path, *, width: int = 1280, height: int = 800) -> dict:
    """Where the decision's elements lie in a `width` x `height` window (see the module
    docstring): each as {top, bottom, text} in CSS pixels from the top of the window."""
    page = html.read_text(encoding="utf-8")
    if "</body>" not in page:
        raise SystemExit(f"{html}: no </body> to put the probe before")
    with tempfile.TemporaryDirectory(prefix="judge-probe-") as tmp:
        probed = Path(tmp) / html.name
        probed.write_text(page.replace("</body>", _PROBE + "</body>", 1), encoding="utf-8")
        # Virtual time lets the load event (and its handler) finish before the DOM is dumped.
        dom = _chromium(probed, width, height, "--virtual-time-budget=5000", "--dump-dom")
    found = _PROBED.search(dom)
    if found is None:
        raise SystemExit("the probe wrote nothing: the page did not finish loading")
    return json.loads(html_lib.unescape(found.group(1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--width", type=int, default=None, help="default 1100 (first screen 1280)")
    parser.add_argument("--height", type=int, default=None, help="default 7000 (first screen 800)")
    parser.add_argument(
        "--first-screen",
        action="store_true",
        help="shoot the first screen and print where the decision's elements are, as JSON",
    )
    args = parser.parse_args()
    html = args.run_dir / "report.html"
    if not html.exists():
        sys.exit(f"{html}: not found; run `judge run` (or `judge report`) first")
    if args.first_screen:
        width, height = args.width or 1280, args.height or 800
        out = args.out or args.run_dir / "report_first_screen.png"
        shot = screenshot(html, out, width=width, height=height)
        layout = first_screen(html, width=width, height=height)
        print(json.dumps({"screenshot": str(shot), **layout}, indent=1))
        return
    out = args.out or args.run_dir / "report_screenshot.png"
    print(screenshot(html, out, width=args.width or 1100, height=args.height or 7000))


if __name__ == "__main__":
    main()
