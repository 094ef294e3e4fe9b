"""What a browser would act on in a fragment of HTML: the check every hostile-input test of the
site shares (run pages, run READMEs, the formatting helpers)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

SAFE_SCHEMES = ("http", "https", "mailto")


class Elements(HTMLParser):
    """Every element of an HTML fragment with its attributes, values unescaped as a browser
    reads them, and the text."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text = ""
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data):
        self.text += data


def live_markup(html: str) -> list[str]:
    """What in `html` a browser would act on: a script or frame, an `on...` attribute, an
    address with a scheme other than http(s) or mailto, an image from another host, math."""
    problems = []
    for tag, attrs in Elements(html).elements:
        if tag in ("script", "iframe", "object", "embed", "form"):
            problems.append(f"a <{tag}> element")
        for name, value in attrs.items():
            url = re.sub(r"[\x00-\x20]", "", value).lower()   # as a browser reads an address
            scheme = re.match(r"([a-z][a-z0-9+.-]*):", url)
            is_address = name in ("href", "src", "action", "formaction")
            if name.startswith("on") or (is_address and scheme and scheme[1] not in SAFE_SCHEMES):
                problems.append(f"<{tag} {name}={value!r}>")
            elif tag == "img" and name == "src" and "//" in url:
                problems.append(f"an image from another host: {value!r}")
            elif name == "class" and "arithmatex" in value:
                problems.append("math typeset from the data")
    return problems
