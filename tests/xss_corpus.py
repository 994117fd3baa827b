"""XSS payloads for the rendering tests: each one, if it ever ran, would set
`window.__xss` or open a dialog (alert/confirm/prompt), which the browser tests watch for.

They cover raw HTML, event handlers, dangerous URL schemes in Markdown and in HTML, attribute
and element breakouts, template-engine syntax, CSS tricks, obfuscated (entity-, unicode- and
case-mangled) variants, and Markdown constructs that produce links (inline, reference-style,
autolinks). Plain text that merely *looks* like code must render as text, not run.
"""

from __future__ import annotations

MARK = "window.__xss=1"

PAYLOADS: list[str] = [
    # raw script tags
    "<script>window.__xss=1</script>",
    "<SCRIPT>alert(1)</SCRIPT>",
    "<ScRiPt>window.__xss=1</sCrIpT>",
    "<script src=data:text/javascript,window.__xss=1></script>",
    "<script>/*</script><script>*/alert(1)</script>",
    "<<script>script>alert(1)<</script>/script>",
    # event handlers
    "<img src=x onerror=window.__xss=1>",
    "<img src=x onerror=alert(1)//",
    '<img src="x" onerror="alert(1)">',
    "<IMG SRC=x OnErRoR=alert(1)>",
    "<img src=x:alert(1) onerror=eval(src)>",
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
    "<body onload=alert(1)>",
    "<details open ontoggle=window.__xss=1>",
    "<input autofocus onfocus=alert(1)>",
    "<video><source onerror=alert(1)></video>",
    "<audio src=x onerror=alert(1)>",
    "<marquee onstart=alert(1)>x</marquee>",
    "<div onmouseover=alert(1) style=position:fixed;inset:0>cover</div>",
    # javascript:, data:, vbscript: links in Markdown
    "[click me](javascript:alert(1))",
    "[click me](JaVaScRiPt:alert(1))",
    "[click me](javascript&#58;alert(1))",
    "[click me](&#106;avascript:alert(1))",
    "[click me](  javascript:alert(1)  )",
    "[click me](java\tscript:alert(1))",
    "[click me](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click me](vbscript:msgbox(1))",
    "![img](javascript:alert(1))",
    '![img](x" onerror="alert(1))',
    '[x](https://example.com" onmouseover="alert(1))',
    # reference-style links and autolinks
    "[ref link][evil]\n\n[evil]: javascript:alert(1)",
    "[ref link][evil2]\n\n[evil2]: data:text/html,<script>alert(1)</script>",
    "<javascript:alert(1)>",
    '<http://example.com/"onmouseover="alert(1)>',
    "www.example.com/<script>alert(1)</script>",
    # javascript:/data: in raw HTML
    '<a href="javascript:alert(1)">html link</a>',
    '<a href="&#x6A;avascript:alert(1)">entity link</a>',
    '<a href="  javascript:window.__xss=1">spaced link</a>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    '<object data="data:text/html,<script>alert(1)</script>"></object>',
    '<embed src="data:text/html,<script>alert(1)</script>">',
    '<form action="javascript:alert(1)"><button>go</button></form>',
    '<math><a xlink:href="javascript:alert(1)">math</a></math>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<base href="javascript:alert(1)//">',
    # attribute and element breakouts
    '"><script>alert(1)</script>',
    "'><script>alert(1)</script>",
    '" onfocus="alert(1)" autofocus="',
    "</textarea><script>alert(1)</script>",
    "</title><script>alert(1)</script>",
    "</pre><script>alert(1)</script>",
    "</script><script>alert(1)</script>",
    "--><script>alert(1)</script><!--",
    "]]><script>alert(1)</script>",
    # template-engine syntax (must stay text: no second template pass anywhere)
    "{{ 7*7 }} {{ constructor.constructor('alert(1)')() }}",
    "{% load hermes_tags %}{% debug %}{{ request }}",
    "${alert(1)} #{alert(1)} <%= alert(1) %>",
    # style / CSS
    '<style>body{background:url("javascript:alert(1)")}</style>',
    '<div style="background-image:url(javascript:alert(1))">css</div>',
    '<div style="width:expression(alert(1))">ie expression</div>',
    '<link rel="stylesheet" href="javascript:alert(1)">',
    # obfuscated: entities, unicode, mixed case, nulls
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;script&#62;alert(1)&#60;/script&#62;",
    "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e",
    "\uff1cscript\uff1ealert(1)\uff1c/script\uff1e",
    "<scr\u0000ipt>alert(1)</scr\u0000ipt>",
    "<img src=x onerror=\u0061lert(1)>",
    '<a href="jav&#x09;ascript:alert(1)">tab entity</a>',
    # Markdown code that contains payloads (rendered as code, never as HTML)
    "```html\n<script>alert(1)</script>\n```",
    "`<img src=x onerror=alert(1)>`",
    "> <script>alert(1)</script>",
    "| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |",
    "**<svg onload=alert(1)>**",
]

# The word the chat messages carry so the search page has snippets with payloads in them.
SEARCH_WORD = "xsscorpus"

assert len(PAYLOADS) >= 50, len(PAYLOADS)
assert len(set(PAYLOADS)) == len(PAYLOADS), "duplicate payloads"

# A DOM walk run in the page: everything that would make a payload live, and the marker.
DOM_CHECK_JS = r"""
() => {
  const bad = [];
  const urlAttrs = ["href", "src", "action", "formaction", "xlink:href", "data", "background", "poster", "srcset"];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      const value = attr.value.toLowerCase();
      if (name.startsWith("on")) bad.push(el.tagName + " has " + name);
      if (name === "srcdoc") bad.push(el.tagName + " has srcdoc");
      if (urlAttrs.includes(name)) {
        // The browser's own URL parser decides what a click or load would run (it drops tabs
        // and newlines, decodes nothing else), so ask it rather than guessing with a regex.
        let protocol = "";
        try { protocol = new URL(attr.value, document.baseURI).protocol; } catch (e) { protocol = "invalid:"; }
        if (["javascript:", "vbscript:", "data:"].includes(protocol)) {
          bad.push(el.tagName + " " + name + "=" + attr.value.slice(0, 60));
        }
      }
      if (name === "style" && /expression\(|javascript:|url\(/.test(value)) bad.push(el.tagName + " style " + value);
    }
  }
  for (const s of document.querySelectorAll("script")) {
    if (!s.src) bad.push("inline script: " + s.textContent.slice(0, 60));
  }
  for (const tag of ["iframe", "object", "embed", "base", "svg script", "math", "style"]) {
    if (document.querySelector(tag)) bad.push("element " + tag);
  }
  if (document.querySelector("meta[http-equiv]")) bad.push("meta http-equiv");
  return {
    bad: bad,
    xss: typeof window.__xss === "undefined" ? null : String(window.__xss),
    csp: (window.__cspViolations || []).slice(),
  };
}
"""

# Installed before any page script: records CSP violations, which must never happen (the
# payloads have to be inert because they are escaped, not because the CSP caught them).
CSP_RECORDER_JS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || ""));
});
"""
