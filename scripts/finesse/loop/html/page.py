"""The HTML document every report page shares: inline styles for light and dark
(`prefers-color-scheme`), a Content-Security-Policy that lets the page load nothing at all
(no script, no font, no image but inline data), and the one escaping every string from a
loop goes through. A prompt, a reply, a command's output and a file name are hostile text:
none reaches the page without `text()`."""

from __future__ import annotations

import html
import re

# Lone surrogates (undecodable file-name bytes, or broken text) and control characters
# other than tab and newline cannot be written as UTF-8 HTML: each becomes U+FFFD.
_UNWRITABLE = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")

# The colour of each result a timeline mark can have; anything else is `other`.
RESULT_KINDS = ("rejected", "continue", "repair", "reverted", "success", "blocked")

STYLE = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d2330; --muted: #5b6475;
  --card: #f4f6fa; --line: #d5dae3; --accent: #2f6fdf;
  --success: #1f9d55; --rejected: #e0781f; --continue: #4f7fd9; --repair: #c9a414;
  --reverted: #9b4dca; --blocked: #d64545; --other: #8a93a3; --bar: #7ea6e8; --cost: #d9480f; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151c; --fg: #e3e7ef; --muted: #9aa3b5; --card: #1c212b; --line: #30384a;
    --accent: #7aa7ff; --success: #3ccf7a; --rejected: #ff9b45; --continue: #6f9cff;
    --repair: #e8c640; --reverted: #c58af0; --blocked: #ff6b6b; --other: #7d8799;
    --bar: #4f79c7; --cost: #ff8a4c; }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1100px; margin: 0 auto; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.15em; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
.task { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 1.05em; margin: 8px 0; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: 2px 10px; border-radius: 999px; color: #fff;
  font-weight: 600; font-size: 0.9em; vertical-align: middle; white-space: nowrap;
  overflow-wrap: normal; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere;
  font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { font: 0.92em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  overflow-wrap: anywhere; }
.timeline { display: flex; flex-wrap: wrap; gap: 4px; margin: 8px 0; }
.mark { display: inline-flex; align-items: center; justify-content: center; min-width: 30px;
  height: 30px; padding: 0 4px; border-radius: 5px; color: #fff; font-weight: 600;
  font-size: 0.85em; text-decoration: none; }
.legend { display: flex; flex-wrap: wrap; gap: 12px; font-size: 0.85em; color: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px;
  border-radius: 2px; margin-right: 4px; background: var(--swatch); }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; overflow-wrap: anywhere; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { fill: var(--muted); font-size: 11px; font-family: system-ui, sans-serif; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .bar { fill: var(--bar); }
svg.chart .cost { fill: none; stroke: var(--cost); stroke-width: 2.5; }
svg.chart .dot { fill: var(--cost); }
.waves { display: grid; grid-auto-flow: column; grid-auto-columns: minmax(240px, 1fr);
  gap: 16px; overflow-x: auto; }
.wave h3 { margin: 0 0 8px; font-size: 1em; color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-left: 6px solid
  var(--swatch); border-radius: 6px; padding: 10px 12px; margin-bottom: 10px; }
.card h4 { margin: 0 0 4px; font-size: 1em; overflow-wrap: anywhere; }
ul { padding-left: 22px; }
li { overflow-wrap: anywhere; }
@media (prefers-color-scheme: dark) { .mark, .badge { color: #10131a; } }
"""
_KIND_RULES = "\n".join(
    f".k-{kind} {{ --swatch: var(--{kind}); }} .mark.k-{kind}, .badge.k-{kind} "
    f"{{ background: var(--{kind}); }}" for kind in (*RESULT_KINDS, "other"))


def clean(value: object) -> str:
    """Text fit for a UTF-8 page: every lone surrogate and control character is U+FFFD."""
    return _UNWRITABLE.sub("\ufffd", str(value))


def text(value: object) -> str:
    """A string from a loop, escaped for an element's content or an attribute's value."""
    return html.escape(clean(value), quote=True)


def kind_of(result: str, gate_action: str = "") -> str:
    """The colour class of a result: a gate's repair or revert shows as such."""
    if result in ("success", "blocked", "rejected"):
        return result
    if gate_action in ("repair", "reverted"):
        return gate_action
    return result if result in RESULT_KINDS else "other"


def legend() -> str:
    return ('<div class="legend">' + "".join(
        f'<span class="k-{kind}">{kind}</span>' for kind in (*RESULT_KINDS, "other"))
        + "</div>")


def document(title: str, body: str) -> str:
    """A whole page: `body` is HTML already escaped piece by piece; `title` is text."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{text(title)}</title>\n"
        f"<style>{STYLE}{_KIND_RULES}</style>\n"
        f"</head><body><main>\n{body}\n</main></body></html>\n"
    )
