"""What every HTML page the project writes shares (the comparison page, a reproduction's
report, a sweep's page): the look (one style sheet, which a page extends with its own
classes), escaping, and the page's head and end. Each page is one self-contained file."""

from __future__ import annotations

import html

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1300px; padding: 0 1em;
       color: #222; line-height: 1.4; }
h1 { font-size: 1.45em; margin-bottom: 0.2em; } h2 { margin-top: 1.6em; font-size: 1.15em;
     border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.5em; vertical-align: top; text-align: left; }
th { background: #f4f4f4; } td.num { text-align: right; white-space: nowrap; }
.muted { color: #666; font-size: 0.9em; }
.warning { background: #fff6e0; border-left: 4px solid #d9a400; padding: 0.5em 0.9em; }
.failed { color: #b00020; }
"""


def e(text) -> str:
    """`text` (anything: str() of it) escaped for HTML text and attribute values."""
    return html.escape(str(text))


def head(title: str, style: str = "", script: str = "") -> str:
    """A page's beginning up to its opened body: the shared style sheet and the page's own
    `style` after it (which may override it), then `script` (the plotting library, when the
    page has zoomable figures)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f"<title>{e(title)}</title>\n<style>{STYLE}{style}</style>{script}</head><body>"
    )


END = "</body></html>"
