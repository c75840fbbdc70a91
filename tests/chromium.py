"""Open an HTML page in headless Chromium and report what its images did: the third-party check
that a report's figures really load in a browser (issue #8)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# A page beside the report loads it in an iframe (same origin under file:// with
# --allow-file-access-from-files), waits for it, and writes each image's state into its own DOM,
# which --dump-dom prints.
CHECKER = """<!doctype html><html><body><pre id="out">pending</pre>
<iframe id="f" src="%s" width="1200" height="800"></iframe>
<script>
document.getElementById('f').onload = function () {
  const imgs = Array.from(this.contentDocument.images);
  const wait = imgs.map(i => i.complete ? Promise.resolve() :
      new Promise(r => { i.onload = r; i.onerror = r; }));
  Promise.all(wait).then(() => {
    document.getElementById('out').textContent = 'RESULT' + JSON.stringify(imgs.map(i => ({
      src: i.getAttribute('src'), width: i.naturalWidth, height: i.naturalHeight,
      complete: i.complete})));
  });
};
</script></body></html>"""


def image_states(report: Path) -> list[dict]:
    """[{src, width, height, complete}] for every <img> of `report` as Chromium loaded it."""
    assert CHROMIUM, "chromium is not installed"
    checker = report.parent / "_chromium_check.html"
    checker.write_text(CHECKER % report.name)
    try:
        with tempfile.TemporaryDirectory() as profile:
            r = subprocess.run(
                [
                    CHROMIUM,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--allow-file-access-from-files",
                    f"--user-data-dir={profile}",
                    "--virtual-time-budget=20000",
                    "--dump-dom",
                    checker.resolve().as_uri(),
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
    finally:
        checker.unlink()
    m = re.search(r"RESULT(\[.*?\])</pre>", r.stdout, re.S)
    assert m, f"no result from chromium (exit {r.returncode}): {r.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
