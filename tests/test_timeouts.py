"""No test can hang the test command: every test has a time limit (pytest-timeout), and a test
that reaches it fails with the stack of where it hung, instead of stopping the suite."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_every_test_has_a_time_limit(pytestconfig, request):
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) == 120
    assert pytestconfig.getini("timeout_method") == "signal"
    assert request.node.get_closest_marker("timeout") is None   # not a site test: 120 s


def test_a_test_that_hangs_fails_with_the_stack_of_where_it_hung(tmp_path):
    (tmp_path / "test_hang.py").write_text("import time\n\n\ndef test_hangs():\n"
                                           "    time.sleep(10**6)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "timeout=2", "test_hang.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stdout
    assert "Failed: Timeout (>2.0s) from pytest-timeout" in done.stdout, done.stdout
    assert "time.sleep(10**6)" in done.stdout and "1 failed" in done.stdout


@pytest.mark.timeout(5)
def test_a_marker_sets_a_tests_own_limit(request):
    assert request.node.get_closest_marker("timeout").args == (5,)
