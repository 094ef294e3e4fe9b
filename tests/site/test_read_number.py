"""A number as a person writes it (docs/assets/javascripts/read-number.js), run under Node on a
table of cases: what the prediction boxes read from what a student types, and the echo they
show. A share typed as a percentage is a share, unless the box's key is in percent."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from sitebuild import REPO

READER = REPO / "docs" / "assets" / "javascripts" / "read-number.js"
CASES = [
    # typed, the key is in percent, value read (None: not a number), echo
    ("0.75", False, 0.75, "0.75"),
    (".75", False, 0.75, ".75 (read as 0.75)"),
    ("75%", False, 0.75, "75% (read as 0.75)"),         # the share a person means
    ("75 %", False, 0.75, "75 % (read as 0.75)"),
    ("75%", True, 75, "75% (read as 75)"),              # a key in percent: the % is its unit
    ("40", True, 40, "40"),
    ("0,5146", False, 0.5146, "0,5146 (read as 0.5146)"),  # a decimal comma
    ("0,125", False, 0.125, "0,125 (read as 0.125)"),
    ("1,20", False, 1.2, "1,20 (read as 1.2)"),
    ("1,200", False, 1200, "1,200 (read as 1200)"),      # three digits after: thousands
    ("1 200", False, 1200, "1 200 (read as 1200)"),
    ("12,345,678", False, 12345678, "12,345,678 (read as 12345678)"),
    ("1.200,5", False, 1200.5, "1.200,5 (read as 1200.5)"),
    ("1,200.5", False, 1200.5, "1,200.5 (read as 1200.5)"),
    ("3/4", False, 0.75, "3/4 (read as 0.75)"),
    ("\u22120.5", False, -0.5, "\u22120.5 (read as -0.5)"),   # a minus sign
    ("+2", False, 2, "+2 (read as 2)"),
    ("1e-3", False, 0.001, "1e-3 (read as 0.001)"),
    ("about 0.9", False, None, None),
    ("1,2,3", False, None, None),
    ("1.5.2", False, None, None),
    ("1/0", False, None, None),
    ("", False, None, None),
]


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js runs the site's scripts here")
def test_a_number_is_read_as_a_person_writes_it():
    script = (f"require({json.dumps(str(READER))});"
              f"const cases = {json.dumps([[typed, percent] for typed, percent, *_ in CASES])};"
              "const read = globalThis.courseReadNumber;"
              "console.log(JSON.stringify(cases.map(([t, p]) => read(t, p))));")
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60,
                          check=True)
    read = json.loads(done.stdout)
    for (typed, _, value, echo), got in zip(CASES, read, strict=True):
        if value is None:
            assert got is None, (typed, got)
        else:
            assert got["value"] == pytest.approx(value) and got["read"] == echo, (typed, got)
