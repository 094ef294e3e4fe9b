"""Session fixtures for the site tests: one strict build, served on 127.0.0.1, shared by every
test process of the session (tests/site/shared_site.py says how)."""

from __future__ import annotations

import os

import prose_numbers
import pytest
from shared_site import start, wait
from sitebuild import CHROMIUM, LAUNCH_ARGS, Build


@pytest.fixture(scope="session")
def _served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, str]:
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):       # a worker: the controller started it
        shared = base.parent
        start(shared, session=os.getppid())
    else:
        shared = base
        start(shared, session=os.getpid())
    return wait(shared)


@pytest.fixture(scope="session")
def built_site(_served: tuple[Build, str]) -> Build:
    """The real site plus the fixture run, built once per test session with --strict."""
    build = _served[0]
    if build.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed (exit {build.returncode}):\n{build.log}")
    return build


@pytest.fixture(scope="session")
def site_url(_served: tuple[Build, str], built_site: Build) -> str:
    """The address the built site is served at, on 127.0.0.1."""
    return _served[1]


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium, driven by Playwright, once per test process (never a browser
    Playwright downloads). Without it the browser tests are skipped, unless CI is set."""
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is not installed (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, and CI is set: the browser tests must run in CI")
        pytest.skip(f"{message}; set CI=1 to turn this skip into a failure")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def the_build_record(request: pytest.FixtureRequest) -> None:
    """When this session builds the site anyway (the test command), the blocks' results as the
    build recorded them: no block runs a second time. Alone (scripts/test_page.sh on one page),
    the page's blocks run here, without a build of the whole site."""
    if any("built_site" in item.fixturenames for item in request.session.items):
        built_site = request.getfixturevalue("built_site")
        assert built_site.record is not None, "the build wrote no record of its blocks"
        prose_numbers.use_record(built_site.record)
