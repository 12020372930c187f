"""Screenshot a run's `report.html` in headless Chromium (Debian package `chromium`).

    python scripts/screenshot_report.py runs/mt-bench-demo [--out report.png] [--height 7000]

The page is opened from disk (file://) with background networking off, so a screenshot that
shows the figures proves the report is self-contained. Prints the PNG's path.
"""

from __future__ import annotations

import argparse
import os
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


def screenshot(html: Path, out: Path, *, width: int = 1100, height: int = 7000) -> Path:
    browser = find_chromium()
    if browser is None:
        raise SystemExit("no Chromium found: apt-get install chromium (or set CHROMIUM=path)")
    with tempfile.TemporaryDirectory(prefix="judge-chromium-") as profile:
        command = [
            browser,
            *_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={out.resolve()}",
            html.resolve().as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--width", type=int, default=1100)
    parser.add_argument("--height", type=int, default=7000)
    args = parser.parse_args()
    html = args.run_dir / "report.html"
    if not html.exists():
        sys.exit(f"{html}: not found; run `judge run` (or `judge report`) first")
    out = args.out or args.run_dir / "report_screenshot.png"
    print(screenshot(html, out, width=args.width, height=args.height))


if __name__ == "__main__":
    main()
