"""Session fixtures for the site tests: one strict build, served on 127.0.0.1.

The server's port is chosen first and the site is built for that address (COURSE_SITE_URL),
so Material's instant navigation works in the browser tests as it does under `mkdocs serve`.
"""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from sitebuild import Build, build_site


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="session")
def _served(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("site") / "site"
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    build = build_site(out, site_url=url)
    print(f"\nmkdocs build --strict: {build.seconds:.1f} s")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield build, url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def built_site(_served) -> Build:
    """The real site plus the fixture run, built once per session with --strict."""
    build = _served[0]
    if build.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed (exit {build.returncode}):\n{build.log}")
    return build


@pytest.fixture(scope="session")
def site_url(_served, built_site: Build) -> str:
    """The address the built site is served at, on 127.0.0.1."""
    return _served[1]
