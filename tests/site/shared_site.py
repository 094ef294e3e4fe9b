"""One strict build of the site per test session, shared by every test process, started early.

The test command runs pytest on both cores (pytest-xdist, scripts/test.sh). As soon as the tests
are collected and some of them need the site, the session's first process (xdist's controller,
or the only process) starts, in the background, a static server on a free port of 127.0.0.1 and
then the build for that address (COURSE_SITE_URL, so that Material's instant navigation works),
while the other tests run; the site tests are collected last (tests/conftest.py). A test that
needs the site waits for `site-build.json`, written when the build ends, and reads the outcome
there. The server stops when the session's process ends, however it ends.

`python tests/site/shared_site.py FOLDER URL` is the background build itself.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from sitebuild import REPO, Build, build_site

AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
"""axe-core, at the version package.json pins: the browser tests' accessibility checker."""
AXE_ROUTE = "/_tests/axe.min.js"
"""Where the server serves `AXE` beside the site (never a file of the site): a page loads it
from there, so the browser caches it and its compiled code like any script of the site. Given
to each page inline instead, it was compiled again on every page, a sixth of a CPU-second."""

SERVER = """
import functools, http.server, os, sys, threading, time
class Quiet(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path):
        return axe if path == route else super().translate_path(path)
    def log_message(self, *args):
        pass
root, session, axe, route = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
server = http.server.ThreadingHTTPServer(
    ("127.0.0.1", 0), functools.partial(Quiet, directory=root))
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
while True:                      # stop once the pytest session's process is gone
    time.sleep(1)
    try:
        os.kill(session, 0)
    except ProcessLookupError:
        break
"""
"""A static server of the built site on a free port of 127.0.0.1, and of axe at AXE_ROUTE;
prints the port."""

OUTCOME = "site-build.json"
STARTED = "site-build.started"


def start(shared: Path, session: int) -> None:
    """Start the server and the background build in `shared`, once per session (a lock and a
    marker file make a second call do nothing)."""
    with open(shared / "site-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # released when the file closes
        if (shared / STARTED).exists():
            return
        out = shared / "site"
        out.mkdir()
        server = subprocess.Popen([sys.executable, "-c", SERVER, str(out), str(session),
                                   str(AXE), AXE_ROUTE],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  start_new_session=True)
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/"
        builder = subprocess.Popen([sys.executable, __file__, str(out), url],
                                   start_new_session=True)
        (shared / STARTED).write_text(json.dumps({"builder": builder.pid}), encoding="utf-8")


def wait(shared: Path) -> tuple[Build, str]:
    """The build's outcome and the address it is served at, once the build has ended (no
    time limit: a loaded machine only makes it slower)."""
    outcome = shared / OUTCOME
    while not outcome.exists():
        time.sleep(0.5)
    fields = json.loads(outcome.read_text(encoding="utf-8"))
    paths = {name: fields["build"][name] and Path(fields["build"][name])
             for name in ("site", "record", "predictions")}
    build = Build(**{**fields["build"], **paths})
    return build, fields["url"]


if __name__ == "__main__":
    site, address = Path(sys.argv[1]), sys.argv[2]
    try:
        done = build_site(site, site_url=address)
    except BaseException as error:       # said to the waiting tests, never a silent hang
        done = Build(site, 0.0, -1, f"the build did not run: {error!r}")
    written = site.parent / f"{OUTCOME}.part"
    written.write_text(json.dumps({"build": asdict(done), "url": address}, default=str),
                       encoding="utf-8")
    written.rename(site.parent / OUTCOME)       # whole, or not at all
