"""Session fixtures for the site tests: one strict build, served on 127.0.0.1, shared by every
test process.

The test command runs pytest on both cores (pytest-xdist, scripts/test.sh). The first process
that needs the site builds it, under a lock in the folder all processes share; the others wait
for it and read what it recorded, so the site (and every block a page runs) is built once per
test command. Without xdist the one process does the same.

The server's port is chosen first and the site is built for that address (COURSE_SITE_URL), so
Material's instant navigation works in the browser tests as it does under `mkdocs serve`. The
server is a process of its own (every test process uses it), and it stops when the pytest
process that started the session ends, however that ends.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from sitebuild import Build, build_site

SERVER = """
import functools, http.server, os, sys, threading, time
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
root, session = sys.argv[1], int(sys.argv[2])
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
"""A static server of the built site on a free port of 127.0.0.1; prints the port."""


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every test process of this session sees: under xdist each worker has a base
    folder of its own inside a common one."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def session_process() -> int:
    """The pytest process that owns the session: xdist's controller (a worker's parent), or
    this process."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


@pytest.fixture(scope="session")
def _served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, str]:
    shared = shared_folder(tmp_path_factory)
    built = shared / "site-build.json"
    with open(shared / "site-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # released when the file closes
        if not built.exists():
            out = shared / "site"
            out.mkdir()
            server = subprocess.Popen(
                [sys.executable, "-c", SERVER, str(out), str(session_process())],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                start_new_session=True)
            assert server.stdout is not None
            url = f"http://127.0.0.1:{server.stdout.readline().strip()}/"
            build = build_site(out, site_url=url)
            print(f"\nmkdocs build --strict: {build.seconds:.1f} s")
            built.write_text(json.dumps({"build": asdict(build), "url": url}, default=str),
                              encoding="utf-8")
        shared_build = json.loads(built.read_text(encoding="utf-8"))
    fields = shared_build["build"]
    build = Build(**{**fields, "site": Path(fields["site"]),
                     "record": fields["record"] and Path(fields["record"])})
    return build, shared_build["url"]


@pytest.fixture(scope="session")
def built_site(_served: tuple[Build, str]) -> Build:
    """The real site plus the fixture run, built once per test command with --strict."""
    build = _served[0]
    if build.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed (exit {build.returncode}):\n{build.log}")
    return build


@pytest.fixture(scope="session")
def site_url(_served: tuple[Build, str], built_site: Build) -> str:
    """The address the built site is served at, on 127.0.0.1."""
    return _served[1]
