"""The teacher's edit loop: `scripts/test_page.sh` tests one page, `mkdocs serve --dirty` stays
correct while it rebuilds one page (course_site.serve), and no lab kernel warns about
unencrypted TCP. How fast the loop is, is measured by benchmarks/bench_edit_loop.py, not here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import zmq
from mkdocs.config import load_config
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parents[1]
TEST_PAGE = REPO / "scripts" / "test_page.sh"
SERVE_HOOK = REPO / "src" / "course_site" / "serve.py"
NOTEBOOKS_HOOK = REPO / "src" / "course_site" / "notebooks.py"


def run_test_page(page: str, repo: Path = REPO) -> tuple[int, str]:
    done = subprocess.run(["bash", str(repo / "scripts" / "test_page.sh"), page], cwd=repo,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def load_hook(path: Path = SERVE_HOOK) -> ModuleType:
    """A fresh copy of a module of the site (its state included), as a new mkdocs process has."""
    spec = importlib.util.spec_from_file_location(f"{path.stem}_hook", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- scripts/test_page.sh ---------------------------------------------------------------------

def test_one_page_passes():
    code, output = run_test_page("docs/maps/index.md")
    assert code == 0, output
    assert re.search(r"\b[1-9]\d* passed, \d+ deselected", output), output
    assert output.rstrip().splitlines()[-1].startswith("test_page: passed docs/maps/index.md")


@pytest.mark.parametrize(("path", "says"), [
    ("README.md", "test_page: README.md is not a page of the site"),
    ("docs/no-such-page.md", "test_page: docs/no-such-page.md: no such file"),
])
def test_a_path_that_is_not_a_page_is_one_clear_line(path, says):
    code, output = run_test_page(path)
    assert code == 2
    assert output.strip().splitlines() == [output.strip()] and output.startswith(says), output


@pytest.fixture
def mini_repo(tmp_path: Path) -> Path:
    """The script, the checks and tests it runs and what they read, copied; the real .venv and
    runs/ linked."""
    for folder in ("tests",):
        shutil.copytree(REPO / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "scripts").mkdir()
    for name in (TEST_PAGE, REPO / "scripts" / "check_page.py"):
        shutil.copy(name, tmp_path / "scripts")
    for name in ("pyproject.toml", "mkdocs.yml"):
        shutil.copy(REPO / name, tmp_path)
    for linked in (".venv", "runs"):
        (tmp_path / linked).symlink_to(REPO / linked)
    return tmp_path


def test_a_broken_page_fails_with_each_mistake_named(mini_repo: Path):
    page = mini_repo / "docs" / "maps" / "broken.md"
    page.parent.mkdir(parents=True)
    page.write_text(textwrap.dedent("""\
        # A page with four mistakes (one: it is not in the nav)

        See [the map](three-loops.md).

        ```python
        rate = 34 / 66
        assert round(rate, 4) == 0.5152
        ```

        The pass rate is 0.6152, and the block below is wrong.

        ```python
        assert 1 + 1 == 3, "this block ran"
        ```
        """), encoding="utf-8")
    code, output = run_test_page("docs/maps/broken.md", mini_repo)
    assert code == 1, output
    checked = ("docs/maps/broken.md:1: not listed in mkdocs.yml's nav, so the strict build fails; "
               "add `- Title: maps/broken.md` in its section (nav)\n"
               "docs/maps/broken.md:3: no file docs/maps/three-loops.md (link three-loops.md)\n")
    assert checked in output, output
    assert "FAILED docs/maps/broken.md::[CodeFence#2]" in output, output
    assert "FAILED tests/site/test_prose_numbers.py::test_prose_numbers[docs/maps/broken.md]" \
        in output and '"0.6152" matches nothing' in output, output
    assert "2 failed, 2 passed" in output, output   # the first block; the predictions check
    assert output.rstrip().splitlines()[-1].startswith("test_page: FAILED docs/maps/broken.md")


def test_a_lab_that_raises_fails_with_its_traceback(mini_repo: Path):
    lab = mini_repo / "docs" / "labs" / "lab_broken.py"
    lab.parent.mkdir(parents=True)
    lab.write_text('print("step 1")\nraise RuntimeError("the lab broke")\n', encoding="utf-8")
    code, output = run_test_page("docs/labs/lab_broken.py", mini_repo)
    assert code == 1
    assert "RuntimeError: the lab broke" in output and "step 1" in output, output
    assert output.rstrip().splitlines()[-1].startswith("test_page: FAILED docs/labs/lab_broken.py")


# -- course_site/serve.py under `mkdocs build` and `mkdocs serve --dirty` ------------------------

def fake_site(root: Path) -> SimpleNamespace:
    """What the hook reads of a mkdocs config, for a repository at `root`."""
    for name, text in (("mkdocs.yml", "site_name: x\n"), ("src/course/a.py", "A = 1\n"),
                       ("data/d.json", "{}\n"), ("runs/run_001/summary.json", "{}\n")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "site").mkdir()
    lab_plugin = SimpleNamespace(config={"cache": True, "cache_dir": ".cache/mkdocs-jupyter"})
    return SimpleNamespace(plugins={"mkdocs-jupyter": lab_plugin}, site_dir=str(root / "site"),
                           config_file_path=str(root / "mkdocs.yml"))


def test_a_build_never_reads_the_lab_cache(tmp_path: Path):
    hook, config = load_hook(), fake_site(tmp_path)
    hook.on_startup(command="build", dirty=False)
    hook.on_config(config)
    assert config.plugins["mkdocs-jupyter"].config["cache"] is False


def test_serve_caches_the_labs_in_one_folder_per_state_of_src_data_and_runs(tmp_path: Path):
    hook, config = load_hook(), fake_site(tmp_path)
    hook.on_startup(command="serve", dirty=True)
    lab = config.plugins["mkdocs-jupyter"].config
    hook.on_config(config)
    first = Path(lab["cache_dir"])
    assert lab["cache"] is True and first.parent == tmp_path / ".cache" / "mkdocs-jupyter"
    first.mkdir(parents=True)
    (tmp_path / "src" / "course" / "a.py").write_text("A = 2\n")
    hook.on_config(config)
    assert Path(lab["cache_dir"]) != first and not first.exists()


def test_dirty_serve_rebuilds_every_page_after_a_change_outside_docs(tmp_path: Path):
    hook, config = load_hook(), fake_site(tmp_path)
    hook.on_startup(command="serve", dirty=True)
    built = Path(config.site_dir) / "lessons" / "index.html"
    built.parent.mkdir()
    built.write_text("built")
    hook.on_pre_build(config)
    hook.on_pre_build(config)          # nothing changed: the dirty build keeps the pages
    assert built.exists()
    (tmp_path / "mkdocs.yml").write_text("site_name: y\n")
    hook.on_pre_build(config)          # the nav may have changed: every page is rebuilt
    assert not built.exists()


def test_dirty_serve_rebuilds_a_generated_page_only_when_its_text_changes(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\nhooks: [{SERVE_HOOK}]\n")
    config = load_config(str(tmp_path / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    config.plugins.on_startup(command="serve", dirty=True)

    def build(text: str) -> bool:
        """One build of a page generated from `text` (as course_site.run_pages makes one):
        whether mkdocs would rebuild it; then it is written, as a build does."""
        generated = File("runs/index.md", src_dir=None, dest_dir=config.site_dir,
                         use_directory_urls=True)
        generated.content_string = text
        files = config.plugins.on_files(Files([generated]), config=config)
        page = files.get_file_from_path("runs/index.md")
        assert page is not None
        modified = page.is_modified()
        Path(page.abs_dest_path).parent.mkdir(parents=True, exist_ok=True)
        Path(page.abs_dest_path).write_text(text)
        time.sleep(0.01)                # so that a rewritten copy is newer than the page
        return modified

    assert build("# Runs\n")            # first build: the page does not exist yet
    assert not build("# Runs\n")        # same text: not rebuilt
    assert build("# Runs, and one more\n")


# -- the lab kernels --------------------------------------------------------------------------

KERNEL = """
import importlib.util, sys
from jupyter_client.manager import start_new_kernel
if sys.argv[1] == "hook":
    sys.path.insert(0, sys.argv[2].rsplit("/", 1)[0])  # as mkdocs loads a hook: its shared code
    spec = importlib.util.spec_from_file_location("notebooks_hook", sys.argv[2])
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    hook.on_startup(command="build", dirty=False)
manager, client = start_new_kernel(kernel_name="python3")
reply = client.execute_interactive("print(6 * 7)", timeout=60)
print(manager.transport_encryption, reply["content"]["status"])
client.stop_channels()
manager.shutdown_kernel(now=True)
"""


@pytest.mark.skipif(not zmq.has("curve"), reason="this pyzmq has no CurveZMQ")
def test_lab_kernels_run_encrypted_so_ipykernel_does_not_warn():
    warning = "Kernel is running over TCP without encryption"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    outputs = {}
    for mode in ("hook", "plain"):
        done = subprocess.run([sys.executable, "-c", KERNEL, mode, str(NOTEBOOKS_HOOK)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs[mode] = done
    # the warning is the kernel's own stderr: without the hook's policy it is printed
    assert warning in outputs["plain"].stderr
    assert outputs["plain"].stdout.split()[-2:] == ["disabled", "ok"]
    assert warning not in outputs["hook"].stderr, outputs["hook"].stderr
    assert outputs["hook"].stdout.split()[-2:] == ["auto", "ok"]
