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


# ---------------------------------------------------------------------------------------
# A page's scripts and plots, through the DevTools protocol on a pipe (--remote-debugging-
# pipe: fd 3 carries commands to Chromium, fd 4 its answers and events, each a JSON message
# ended by a NUL byte). No websocket, no driver: only the browser.

PLOTS_JS = """new Promise(done => {
  const t0 = Date.now();
  const ok = v => v !== null && v !== undefined && !(typeof v === 'number' && !isFinite(v));
  // Each subplot (x axis) of a drawn plot: its data points (x and y both given) and, for
  // lines and markers, the span of their x values; an axis with no point, or whose points
  // all sit at one x (the -0.04..0.04 axis Plotly draws around a lone point), is empty.
  const axes = p => {
    const out = {};
    for (const k of Object.keys(p._fullLayout).filter(k => /^xaxis\\d*$/.test(k)))
      out[k === 'xaxis' ? 'x' : 'x' + k.slice(5)] = {points: 0, lo: Infinity, hi: -Infinity,
                                                     bars: false};
    for (const t of p._fullData || []) {
      const a = out[t.xaxis || 'x'];
      if (!a || t.visible === false) continue;
      const xs = t.x || [], ys = t.y || [];
      a.bars = a.bars || t.type === 'bar';
      for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
        if (!ok(xs[i]) || !ok(ys[i])) continue;
        a.points++;
        if (t.type !== 'bar' && typeof xs[i] === 'number') {
          a.lo = Math.min(a.lo, xs[i]); a.hi = Math.max(a.hi, xs[i]); }
      }
    }
    return Object.entries(out).map(([k, a]) => ({axis: k, points: a.points,
      span: a.bars || a.lo > a.hi ? null : a.hi - a.lo}));
  };
  (function wait() {
    const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
    const drawn = plots.filter(p => p.querySelector('.main-svg') && p._fullLayout);
    if ((plots.length && drawn.length === plots.length) || Date.now() - t0 > %d) {
      done(JSON.stringify({plots: plots.length, drawn: drawn.length,
        traces: drawn.map(p => p.querySelectorAll('.trace, .scatterlayer path, .gl-container')
                                .length),
        axes: drawn.map(p => ({id: p.id, axes: axes(p)})),
        boxes: drawn.map(p => { const r = p.getBoundingClientRect();
                                return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }),
        height: document.documentElement.scrollHeight}));
    } else { setTimeout(wait, 100); }
  })();
})"""


class _Pipe:
    def __init__(self, proc, write_fd: int, read_fd: int):
        self.proc, self.w, self.r = proc, write_fd, read_fd
        self.buf = b""
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        import os

        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name: str, timeout: float = 60.0) -> dict:
        import time

        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for i, e in enumerate(self.events):
                if e.get("method") == name:
                    return self.events.pop(i)
            self.events.append(self._read(max(end - time.monotonic(), 0.01)))
        raise TimeoutError(name)

    def _read(self, timeout: float = 60.0) -> dict:
        import os
        import select

        while b"\0" not in self.buf:
            ready, _, _ = select.select([self.r], [], [], timeout)
            if not ready:
                raise TimeoutError("no message from chromium")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)


def page_check(page: Path, width: int = 1300, wait_ms: int = 15000) -> dict:
    """Load `page` in headless Chromium and report {errors: [console errors, uncaught
    exceptions, failed loads, empty plots], plots, drawn, traces, boxes (of each plot, CSS
    px), axes (per plot, each subplot's data points and x span), empty (empty_plots),
    screenshot: PNG bytes of the whole page}."""
    import base64
    import os

    assert CHROMIUM, "chromium is not installed"
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def fds():  # in the child: its fd 3 reads our commands, fd 4 writes its answers
        r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)  # above 4: safe from the dup2s
        os.dup2(r, 3)
        os.dup2(w, 4)

    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
                "--allow-file-access-from-files",
                f"--user-data-dir={profile}",
                f"--window-size={width},1000",
                "about:blank",
            ],
            preexec_fn=fds,
            pass_fds=(3, 4),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        cdp = _Pipe(proc, to_chrome_w, from_chrome_r)
        try:
            targets = cdp.send("Target.getTargets")["targetInfos"]
            target = next(t["targetId"] for t in targets if t["type"] == "page")
            sid = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"
            ]
            for domain in ("Runtime", "Log", "Page"):
                cdp.send(f"{domain}.enable", session=sid)
            cdp.send("Page.navigate", {"url": page.resolve().as_uri()}, session=sid)
            cdp.wait_event("Page.loadEventFired")
            res = cdp.send(
                "Runtime.evaluate",
                {"expression": PLOTS_JS % wait_ms, "awaitPromise": True, "returnByValue": True},
                session=sid,
            )
            info = json.loads(res["result"]["value"])
            cdp.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": min(info["height"], 16000), "deviceScaleFactor": 1,
                 "mobile": False},
                session=sid,
            )  # fmt: skip
            shot = cdp.send("Page.captureScreenshot", {"format": "png"}, session=sid)
            info["screenshot"] = base64.b64decode(shot["data"])
            info["empty"] = empty_plots(info)
            info["errors"] = _errors(cdp.events) + [f"empty plot: {e}" for e in info["empty"]]
            cdp.send("Browser.close")
        finally:
            proc.wait(timeout=30) if proc.poll() is None and _close(proc) else None
            os.close(to_chrome_w)
            os.close(from_chrome_r)
    return info


def empty_plots(info: dict) -> list[str]:
    """The subplots of a page_check that show nothing: no data point on their x axis, or
    lines and markers all at one x (Plotly then draws a near zero-width axis around them,
    as -0.04..0.04 s)."""
    out = []
    for i, plot in enumerate(info.get("axes", [])):
        for a in plot["axes"]:
            where = f"plot {i + 1} ({plot['id'] or 'no id'}), axis {a['axis']}"
            if a["points"] == 0:
                out.append(f"{where}: no data")
            elif a["span"] == 0 and a["points"] > 1:
                out.append(f"{where}: every point at one x (a zero-width axis)")
    return out


def _close(proc) -> bool:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return False


def _errors(events: list[dict]) -> list[str]:
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            out.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
            out.append(f"{p['entry'].get('text')} {p['entry'].get('url', '')}".strip())
    return out


def blank(png: bytes, box=None) -> bool:
    """True when the PNG (or the box [left, top, width, height] of it) is one colour."""
    import io

    import numpy as np
    from PIL import Image

    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    if box is not None:
        x, y, w, h = (int(v) for v in box)
        img = img[y : y + h, x : x + w]
    if img.size == 0:
        return True
    return int(np.abs(img - img[0, 0]).max()) < 16 or (img != img[0, 0]).any(axis=2).mean() < 0.01
