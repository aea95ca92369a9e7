"""The package as users get it: the sdist and the wheel built, the wheel installed alone.

Every other test imports the editable install of the checkout, which sees every file of
``passk/`` whether or not the wheel carries it. This module builds what the release
workflow publishes and runs it where nothing else is importable:

- **Build** as ``python -m build`` does (the release workflow's command): the sdist from a
  clean copy of the checkout (its git-tracked and untracked-but-not-ignored files), then
  the wheel from the unpacked sdist. ``build`` and the ``[build-system] requires`` are
  installed from the package index into a throwaway build environment (pip's cache makes
  that quick after the first time), and the build runs there with ``--no-isolation``.
- **Check** the wheel holds every module and every other file under ``passk/`` (py.typed,
  shipped data), the sdist too, and the metadata is ``pyproject.toml``'s (the fields
  ``twine check`` looks at, and more: name, version, summary, requirements, extras, the
  README as a Markdown description, the licence, the entry points).
- **Install** the wheel with pip (``--no-index --no-deps``) into a clean venv with no
  extras: no system site-packages, no ``PYTHONPATH``, a working directory outside the
  checkout. Its runtime requirements (numpy, scipy, tqdm) and pytest (for the plugin) are
  linked, file by file from their ``RECORD``, from the distributions already installed in
  the environment running the tests, rather than installed again (pip installing numpy
  and scipy from wheels took 60 s on the project's 2-core machine, linking them well under
  a second); ``pip check`` then proves the wheel's ``Requires-Dist`` is satisfied.
- **Run** there every subcommand on shipped files, ``python -m passk``, the import of every
  module found by walking the installed package (a new subpackage is covered with no
  edit), the pytest plugin's options and a marked test with ``--passk-log``, and
  ``passk.inspect``'s "needs the optional extra" error. A command's output is compared
  with what the checkout's ``passk.cli.main`` prints for the same arguments, in process.

A module or data file missing from the wheel fails ``test_the_wheel_holds_every_file``
and the commands that need it (built once with ``packages = ["passk"]``, the old
setting, the wheel lacked ``passk/formats/`` and eleven tests here failed).
"""

from __future__ import annotations

import contextlib
import email.parser
import importlib.metadata
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from passk import cli

pytestmark = pytest.mark.slow  # about 30 s: two environments, a build, a dozen commands

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DIST = PROJECT["project"]["name"]
VERSION = PROJECT["project"]["version"]
# the results files that ship with the repository, copied to the venv's working directory
SHIPPED = {"tau.json": ROOT / "book" / "data" / "tau-bench" / "gpt-4o-airline-rewards.json",
           "oncall_tasks.jsonl": ROOT / "examples" / "oncall_tasks.jsonl"}
ADAPTER = "passk.flaky_adapter:OnCallSimulator"
TIMEOUT_S = 300


def _sh(args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {proc.returncode}:\n"
                    f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}", pytrace=False)
    return proc


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """This environment's pip acting on another interpreter (``pip --python``)."""
    return _sh([sys.executable, "-m", "pip", "--python", str(python),
                "--disable-pip-version-check", *args])


def _source_files() -> list[str]:
    """The checkout's files as a fresh clone (plus new files) has them, relative paths."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        out = _sh(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                   "--exclude-standard"]).stdout
        return sorted({f for f in out.split("\0") if f and (ROOT / f).is_file()})
    hidden = {".git", ".venv", "_build", "build", "dist", "__pycache__"}
    return sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                  if p.is_file() and not hidden & set(p.relative_to(ROOT).parts))


def _package_files(files: list[str]) -> set[str]:
    """What of ``passk/`` must ship: every file but compiled ones."""
    return {f for f in files if f.startswith("passk/") and not f.endswith((".pyc", ".pyo"))
            and "__pycache__" not in f}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("wheel")


@pytest.fixture(scope="module")
def source(workspace: Path) -> tuple[Path, set[str]]:
    """A clean copy of the checkout, and the files under passk/ that must ship."""
    files = _source_files()
    src = workspace / "src"
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)
    return src, _package_files(files)


@pytest.fixture(scope="module")
def built(workspace: Path, source: tuple[Path, set[str]]) -> tuple[Path, Path]:
    """(sdist, wheel), built as ``python -m build`` does: the wheel from the sdist."""
    src, _ = source
    env_dir = workspace / "build-env"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(env_dir)])
    python = env_dir / "bin" / "python"
    try:
        _pip(python, "install", "-q", "build", *PROJECT["build-system"]["requires"])
    except pytest.fail.Exception as exc:
        pytest.fail("could not install `build` and the build requirements from the package "
                    "index (needed once; pip caches them): " + str(exc), pytrace=False)
    out = workspace / "dist"
    _sh([str(python), "-m", "build", "--no-isolation", "--outdir", str(out), str(src)])
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(out.iterdir())
    return sdists[0], wheels[0]


def _closure(names: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions that ``names`` need, with their own requirements."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    stack = [Requirement(n) for n in names]
    while stack:
        req = stack.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        key = canonicalize_name(req.name)
        if key in seen:
            continue
        seen[key] = importlib.metadata.distribution(req.name)
        stack += [Requirement(r) for r in seen[key].requires or []]
    return list(seen.values())


def _link_distribution(dist: importlib.metadata.Distribution, site: Path) -> None:
    """Make ``dist`` importable in ``site`` by linking its top-level files and folders."""
    tops = {Path(str(f)).parts[0] for f in dist.files or []}
    for top in sorted(t for t in tops if t not in ("..", "__pycache__")):
        target = Path(str(dist.locate_file(top)))
        if target.exists() and not (site / top).exists():
            (site / top).symlink_to(target)


@pytest.fixture(scope="module")
def venv(workspace: Path, built: tuple[Path, Path]) -> Path:
    """A clean venv holding the wheel, its runtime requirements and pytest; no extras."""
    _, wheel = built
    venv = workspace / "venv"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(_sh([str(python), "-I", "-c", purelib]).stdout.strip())
    with zipfile.ZipFile(wheel) as zf:
        meta = _metadata(zf)
    runtime = [r for r in meta.get_all("Requires-Dist") or [] if "extra" not in r]
    for dist in _closure(runtime + ["pytest"]):
        _link_distribution(dist, site)
    _pip(python, "install", "-q", "--no-index", "--no-deps", str(wheel))
    _pip(python, "check")
    return venv


@pytest.fixture(scope="module")
def cwd(workspace: Path, venv: Path) -> Path:
    """The working directory of the venv's commands: the shipped files, nothing else."""
    cwd = workspace / "user"
    cwd.mkdir()
    for name, path in SHIPPED.items():
        shutil.copy2(path, cwd / name)
    return cwd


def _user_env(venv: Path) -> dict[str, str]:
    """A user's environment with the venv activated: nothing of the test's own Python."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PYTEST", "COV_", "CONDA"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
               VIRTUAL_ENV=str(venv), COLUMNS="200", NO_COLOR="1", PYTHONUNBUFFERED="1")
    return env


def _in_venv(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _sh(list(args), cwd=cwd, env=_user_env(venv), check=False)


def _in_checkout(cwd: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch
                 ) -> tuple[int, str, str]:
    """What the checkout's ``passk`` prints for ``argv``: (status, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:  # --help
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def _metadata(zf: zipfile.ZipFile) -> email.message.Message:
    name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    return email.parser.Parser().parsestr(zf.read(name).decode("utf-8"))


# --- what was built -----------------------------------------------------------------------

def test_the_wheel_holds_every_file(source, built):
    _, wheel = built
    _, must_ship = source
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    missing = sorted(must_ship - names)
    assert not missing, (
        f"{wheel.name} lacks {len(missing)} file(s) of passk/: {missing[:10]} (a new "
        "subpackage needs an __init__.py; data files need MANIFEST.in's graft)")
    assert "passk/py.typed" in names and "passk/formats/__init__.py" in names


def test_the_sdist_holds_the_package_and_its_metadata(source, built):
    sdist, _ = built
    _, must_ship = source
    with tarfile.open(sdist) as tf:
        top = tf.getnames()[0].split("/")[0]
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert top == f"{canonicalize_name(DIST).replace('-', '_')}-{VERSION}"
    missing = sorted(must_ship - names)
    assert not missing, f"{sdist.name} lacks {missing[:10]}"
    for name in ("PKG-INFO", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        assert name in names, f"{sdist.name} lacks {name}"


def test_the_wheel_metadata_is_pyproject_s(built):
    """The fields ``twine check`` and the registry read, against pyproject.toml."""
    _, wheel = built
    project = PROJECT["project"]
    with zipfile.ZipFile(wheel) as zf:
        meta = _metadata(zf)
        entry_points = next(zf.read(n).decode() for n in zf.namelist()
                            if n.endswith(".dist-info/entry_points.txt"))
        licences = [n for n in zf.namelist() if "/licenses/" in n]
    assert meta["Name"] == DIST == "passk-reliability"
    assert meta["Version"] == VERSION
    assert tuple(int(x) for x in meta["Metadata-Version"].split(".")) >= (2, 4)
    assert meta["Summary"] == project["description"]
    assert meta["Requires-Python"] == project["requires-python"]
    assert meta["License-Expression"] == project["license"]
    assert meta["License-File"] == "LICENSE" and licences and licences[0].endswith("LICENSE")
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().strip() == (ROOT / "README.md").read_text("utf-8").strip()
    runtime = {str(Requirement(r)) for r in meta.get_all("Requires-Dist")
               if "extra" not in r}
    assert runtime == {str(Requirement(r)) for r in project["dependencies"]}
    assert set(meta.get_all("Provides-Extra")) == set(project["optional-dependencies"])
    assert "passk = passk.cli:main" in entry_points
    assert "passk = passk.pytest_plugin" in entry_points
    assert "passk = passk.inspect" in entry_points


# --- installed alone ----------------------------------------------------------------------

def test_the_venv_holds_the_wheel_and_no_extra(venv, cwd):
    probe = ("import importlib.metadata as m, importlib.util as u, json, passk; "
             "print(json.dumps([passk.__file__, m.version('passk-reliability'), "
             "[n for n in ('inspect_ai', 'matplotlib', 'distributed') if u.find_spec(n)]]))")
    proc = _in_venv(venv, cwd, "python", "-c", probe)
    assert proc.returncode == 0, proc.stderr
    where, version, extras = json.loads(proc.stdout)
    assert Path(where).is_relative_to(venv), where  # not the checkout's passk
    assert version == VERSION
    assert extras == []


WALK = """
import importlib, json, pkgutil, passk
imported, needs_extra, broken = [], {}, {}
def onerror(name):
    broken[name] = "walk_packages could not import it"
for m in pkgutil.walk_packages(passk.__path__, "passk.", onerror=onerror):
    if m.name.rsplit(".", 1)[-1] == "__main__":
        continue  # runs the command: python -m passk is tested on its own
    try:
        importlib.import_module(m.name)
        imported.append(m.name)
    except ImportError as exc:
        (needs_extra if "needs the optional extra" in str(exc) else broken)[m.name] = str(exc)
print(json.dumps({"imported": imported, "needs_extra": needs_extra, "broken": broken}))
"""


def test_every_module_imports_or_names_its_extra(venv, cwd, source):
    _, must_ship = source
    proc = _in_venv(venv, cwd, "python", "-c", WALK)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert not found["broken"], found["broken"]
    walked = {"passk", *found["imported"], *found["needs_extra"]}
    modules = {f.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for f in must_ship if f.endswith(".py") and not f.endswith("__main__.py")}
    assert modules <= walked, sorted(modules - walked)
    assert "passk.inspect" in found["needs_extra"]
    for name, message in found["needs_extra"].items():
        assert f"pip install '{DIST}[" in message, (name, message)


def test_passk_inspect_says_it_needs_the_inspect_extra(venv, cwd):
    proc = _in_venv(venv, cwd, "python", "-c", "import passk.inspect")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == ("ImportError: passk.inspect needs the optional extra 'inspect': pip "
                    f"install '{DIST}[inspect]' (or pip install inspect-ai)"), proc.stderr


# every subcommand on shipped files: (arguments, exit status)
COMMANDS = [
    (["--help"], 0),
    (["demo"], 0),
    (["curves", "--p", "0.9", "--k", "5"], 0),
    (["plan", "--k", "5"], 0),
    (["report", "tau.json"], 0),
    (["report", "tau.json", "--markdown"], 0),
    (["gate", "tau.json", "--json"], 1),
    (["gate", "tau.json", "--k", "1", "--min-overall", "0.4", "--max-flakiness", "1"], 0),
    (["report", "oncall_tasks.jsonl"], 2),   # a task list, not results: named as such
]


@pytest.mark.parametrize(("argv", "status"), COMMANDS, ids=lambda a: " ".join(map(str, a))
                         if isinstance(a, list) else str(a))
def test_each_subcommand_prints_what_the_checkout_prints(venv, cwd, argv, status,
                                                         monkeypatch):
    proc = _in_venv(venv, cwd, "passk", *argv)
    expected = _in_checkout(cwd, argv, monkeypatch)
    assert (proc.returncode, proc.stdout, proc.stderr) == expected
    assert proc.returncode == status, proc.stderr


def test_a_plot_without_the_plot_extra_names_it(venv, cwd):
    proc = _in_venv(venv, cwd, "passk", "report", "tau.json", "--plot", "curves.png")
    assert proc.returncode == 2
    assert f"pip install '{DIST}[plot]'" in proc.stderr, proc.stderr
    assert not (cwd / "curves.png").exists()


def test_python_dash_m_passk_is_the_command(venv, cwd):
    command = _in_venv(venv, cwd, "passk", "curves", "--p", "0.8", "--k", "3")
    module = _in_venv(venv, cwd, "python", "-m", "passk", "curves", "--p", "0.8", "--k", "3")
    assert command.returncode == module.returncode == 0, module.stderr
    assert command.stdout == module.stdout and "0.5120" in module.stdout


def test_run_then_every_reader_of_its_log(venv, cwd, monkeypatch):
    """``passk run`` with the shipped adapter and tasks; its log read back by the others."""
    proc = _in_venv(venv, cwd, "passk", "run", ADAPTER, "oncall_tasks.jsonl", "--log",
                    "runs.jsonl", "--no-progress", "--seed", "3")
    assert proc.returncode in (0, 1), proc.stderr  # passed or blocked, not an error
    assert re.search(r"runs: 22 counted of 22 planned", proc.stdout), proc.stdout
    for argv in (["report", "runs.jsonl", "--json"], ["plan", "runs.jsonl"],
                 ["diff", "runs.jsonl", "runs.jsonl"],
                 ["gate", "runs.jsonl", "--baseline", "runs.jsonl"]):
        got = _in_venv(venv, cwd, "passk", *argv)
        assert (got.returncode, got.stdout, got.stderr) == _in_checkout(cwd, argv,
                                                                         monkeypatch), argv


PLUGGED = """
import pytest

@pytest.mark.passk(runs=4, k=2)
def test_always(passk_seed):
    assert passk_seed >= 0
"""


def test_the_pytest_plugin_is_registered_and_logs(venv, cwd):
    helped = _in_venv(venv, cwd, "python", "-m", "pytest", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "--passk-log" in helped.stdout and "--passk-runs" in helped.stdout
    (cwd / "test_agent.py").write_text(PLUGGED, encoding="utf-8")
    ran = _in_venv(venv, cwd, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "--passk-log", "plugin.jsonl", "test_agent.py")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "4 passed" in ran.stdout and "gate: PASSED" in ran.stdout, ran.stdout
    report = _in_venv(venv, cwd, "passk", "report", "plugin.jsonl", "--json")
    assert report.returncode == 0, report.stderr
    assert '"test_agent.py::test_always"' in report.stdout
