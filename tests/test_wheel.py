"""The package as users get it: the sdist and the wheel built, the wheel installed alone.

Every other test imports the editable install of the checkout, which sees every file of
``passk/`` whether or not the wheel carries it. This module builds what the release
workflow publishes and runs it where nothing else is importable:

- **Build** as ``python -m build`` does (the release workflow's command): the sdist from a
  clean copy of the checkout (its git-tracked and untracked-but-not-ignored files), then
  the wheel from the unpacked sdist. ``build`` and the ``[build-system] requires`` are
  installed from the package index, the first time only, into a build environment kept in
  ``~/.cache/passk-reliability/``, and the build runs there with ``--no-isolation``
  (offline after that first time).
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
- **Run** there every subcommand on shipped files (``run`` with the shipped adapter and
  tasks, then ``report``, ``plan``, ``diff`` and ``gate --baseline`` on its log), the
  import of every module found by walking the installed package (a new subpackage is
  covered with no edit) and ``passk.integrations.inspect``'s "needs the optional extra" error, all in
  one process (each start imports numpy and scipy); then the console script,
  ``python -m passk``, the plot extra's message, and the pytest plugin (its options in
  ``pytest --help``, a marked test run with ``--passk-log``), each a process of its own.
  Each subcommand's status, stdout and stderr must equal what the checkout's
  ``passk.cli.main`` gives for the same arguments, in process.

A module or data file missing from the wheel fails ``test_the_wheel_holds_every_file``
and the commands that need it: built once with the old packaging (``packages =
["passk"]``, no MANIFEST.in), the wheel lacked the seven files of ``passk/formats/`` and
21 of the 22 tests here failed, each naming them or ``No module named 'passk.results.formats'``.
"""

from __future__ import annotations

import contextlib
import email.parser
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import os
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
from patience import CEILING_S  # the tests' one ceiling on a wait

from passk import cli

# about 30 s (two environments, a build, a dozen commands): in the default test command, as
# the wheel is what users install

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DIST = PROJECT["project"]["name"]
VERSION = PROJECT["project"]["version"]
# the results files that ship with the repository, copied to the venv's working directory
SHIPPED = {"tau.json": ROOT / "book" / "data" / "tau-bench" / "gpt-4o-airline-rewards.json",
           "oncall_tasks.jsonl": ROOT / "examples" / "oncall_tasks.jsonl"}
ADAPTER = "passk.flaky_adapter:OnCallSimulator"
TIMEOUT_S = CEILING_S


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


def _build_env() -> Path:
    """The python of a venv holding ``build`` and the build requirements.

    Made once per requirements and interpreter and kept in the user's cache (made under
    another name and renamed into place whole, so that two sessions never see half of one;
    only ``bin/python -m build`` is used, which does not mind the rename): later runs
    need no package index."""
    wanted = ["build", *PROJECT["build-system"]["requires"]]
    key = hashlib.sha256(json.dumps([wanted, sys.version, sys.base_prefix]).encode())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    env_dir = cache / "passk-reliability" / f"build-env-{key.hexdigest()[:16]}"
    python = env_dir / "bin" / "python"
    if python.exists() and _sh([str(python), "-c", "import build, setuptools"],
                               check=False).returncode == 0:
        return python
    staging = env_dir.with_name(f"{env_dir.name}.{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    _sh([sys.executable, "-m", "venv", "--without-pip", str(staging)])
    try:
        _pip(staging / "bin" / "python", "install", "-q", *wanted)
    except pytest.fail.Exception as exc:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.fail(f"could not install {wanted} from the package index (needed once, then "
                    f"kept in {env_dir}): {exc}", pytrace=False)
    shutil.rmtree(env_dir, ignore_errors=True)  # a broken one
    try:
        staging.rename(env_dir)
    except OSError:  # another session put one there meanwhile: use that one
        shutil.rmtree(staging, ignore_errors=True)
    return python


@pytest.fixture(scope="module")
def built(workspace: Path, source: tuple[Path, set[str]]) -> tuple[Path, Path]:
    """(sdist, wheel), built as ``python -m build`` does: the wheel from the sdist."""
    src, _ = source
    python = _build_env()
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
    for dist in _closure([*runtime, "pytest"]):
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
    assert "passk/py.typed" in names and "passk/__init__.py" in names


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
    groups = {"console_scripts": project["scripts"], **project["entry-points"]}
    for group, points in groups.items():
        for name, value in points.items():
            assert f"[{group}]\n" in entry_points and f"{name} = {value}\n" in entry_points, (
                group, name, entry_points)


# --- installed alone ----------------------------------------------------------------------

# every subcommand on shipped files, in order (run writes the log the next ones read):
# (arguments, exit status)
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
    (["run", ADAPTER, "oncall_tasks.jsonl", "--log", "runs.jsonl", "--no-progress",
      "--seed", "3"], 1),
    (["report", "runs.jsonl", "--json"], 0),
    (["plan", "runs.jsonl"], 0),
    (["diff", "runs.jsonl", "runs.jsonl"], 0),
    (["gate", "runs.jsonl", "--baseline", "runs.jsonl"], 1),
]

# One process in the venv (each start imports numpy and scipy: one, not a dozen): what is
# installed, the import of every module found by walking the installed package (a new
# subpackage is covered with no edit), passk.integrations.inspect's error, and passk.cli.main on each
# of COMMANDS, as _in_checkout runs them on the checkout.
DRIVER = """
import contextlib, importlib, importlib.metadata as md, importlib.util, io, json, pkgutil, sys
import passk
from passk import cli

def main(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:
            status = int(exc.code or 0)
    return [status, out.getvalue(), err.getvalue()]

found = {"file": passk.__file__, "version": md.version("passk-reliability"),
         "extras": [n for n in ("inspect_ai", "matplotlib", "distributed")
                    if importlib.util.find_spec(n)],
         "commands": [main(argv) for argv in json.loads(sys.argv[1])],
         "imported": [], "needs_extra": {}, "broken": {}}

def onerror(name):
    found["broken"][name] = "walk_packages could not import it"

for m in pkgutil.walk_packages(passk.__path__, "passk.", onerror=onerror):
    if m.name.rsplit(".", 1)[-1] == "__main__":
        continue  # runs the command: python -m passk is tested on its own
    try:
        importlib.import_module(m.name)
        found["imported"].append(m.name)
    except ImportError as exc:
        kind = "needs_extra" if "needs the optional extra" in str(exc) else "broken"
        found[kind][m.name] = str(exc)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def driven(venv: Path, cwd: Path) -> dict:
    proc = _in_venv(venv, cwd, "python", "-c", DRIVER, json.dumps([a for a, _ in COMMANDS]))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def reference(workspace: Path) -> list[tuple[int, str, str]]:
    """The checkout's passk on COMMANDS, in a working directory of its own."""
    ref = workspace / "reference"
    ref.mkdir()
    for name, path in SHIPPED.items():
        shutil.copy2(path, ref / name)
    with pytest.MonkeyPatch.context() as mp:
        return [_in_checkout(ref, argv, mp) for argv, _ in COMMANDS]


def test_the_venv_holds_the_wheel_and_no_extra(driven, venv):
    assert Path(driven["file"]).is_relative_to(venv), driven["file"]  # not the checkout's
    assert driven["version"] == VERSION
    assert driven["extras"] == []


def test_every_module_imports_or_names_its_extra(driven, source):
    _, must_ship = source
    assert not driven["broken"], driven["broken"]
    walked = {"passk", *driven["imported"], *driven["needs_extra"]}
    modules = {f.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for f in must_ship if f.endswith(".py") and not f.endswith("__main__.py")}
    assert modules <= walked, sorted(modules - walked)
    inspect_error = driven["needs_extra"]["passk.integrations.inspect"]
    assert "needs the optional extra 'inspect'" in inspect_error, inspect_error
    assert f"pip install '{DIST}[inspect]'" in inspect_error, inspect_error
    for name, message in driven["needs_extra"].items():
        assert f"pip install '{DIST}[" in message, (name, message)


@pytest.mark.parametrize(("i", "argv", "status"), [(i, a, s) for i, (a, s) in
                                                   enumerate(COMMANDS)],
                         ids=[" ".join(a)[:50] for a, _ in COMMANDS])
def test_each_subcommand_prints_what_the_checkout_prints(driven, reference, i, argv, status):
    got = tuple(driven["commands"][i])
    assert got == reference[i], argv
    assert got[0] == status, got[2]


def test_the_console_script_and_python_dash_m(venv, cwd):
    """The installed entry points themselves, each a process of its own."""
    helped = _in_venv(venv, cwd, "passk", "--help")
    assert helped.returncode == 0 and "usage: passk" in helped.stdout, helped.stderr
    reported = _in_venv(venv, cwd, "passk", "report", "tau.json")
    assert reported.returncode == 0 and "gate: BLOCKED" in reported.stdout, reported.stderr
    module = _in_venv(venv, cwd, "python", "-m", "passk", "curves", "--p", "0.8", "--k", "3")
    assert module.returncode == 0 and "0.5120" in module.stdout, module.stderr


def test_a_plot_without_the_plot_extra_names_it(venv, cwd):
    proc = _in_venv(venv, cwd, "passk", "report", "tau.json", "--plot", "curves.png")
    assert proc.returncode == 2
    assert f"pip install '{DIST}[plot]'" in proc.stderr, proc.stderr
    assert not (cwd / "curves.png").exists()


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
    log = [json.loads(line) for line in (cwd / "plugin.jsonl").read_text().splitlines()]
    runs = [r for r in log if r.get("task_id") == "test_agent.py::test_always"]
    assert len(runs) == 4 and all(r["success"] is True for r in runs), log


# --- the plugin page's example (book/using/pytest.md), as a newcomer meets it --------------

def _plugin_section() -> str:
    return (ROOT / "book" / "using" / "pytest.md").read_text(encoding="utf-8")


def _console_scripts(dist: importlib.metadata.Distribution, bin_dir: Path) -> None:
    """The console scripts pip would write for ``dist`` (linking a distribution skips them)."""
    python = bin_dir / "python"
    for ep in dist.entry_points:
        if ep.group == "console_scripts":
            module, _, attr = ep.value.partition(":")
            script = bin_dir / ep.name
            script.write_text(f"#!{python}\nimport sys\nfrom {module} import {attr.split('.')[0]}"
                              f"\nsys.exit({attr}())\n", encoding="utf-8")
            script.chmod(0o755)


@pytest.fixture(scope="module")
def plugin_venv(workspace: Path, built: tuple[Path, Path]) -> Path:
    """A clean venv holding the wheel with the extra the README's install line names, and
    exactly what that extra requires (from the wheel's metadata): nothing else."""
    line = next(x for x in _plugin_section().splitlines() if x.startswith("pip install"))
    assert line.startswith(f"pip install '{DIST}[") and line.endswith("]'"), line
    extra = line.split("[", 1)[1].rstrip("]'")
    _, wheel = built
    with zipfile.ZipFile(wheel) as zf:
        meta = _metadata(zf)
    assert extra in meta.get_all("Provides-Extra"), (extra, meta.get_all("Provides-Extra"))
    wanted = []
    for r in meta.get_all("Requires-Dist") or []:
        req = Requirement(r)
        if req.marker is None or req.marker.evaluate({"extra": extra}):
            wanted.append(f"{req.name}{req.specifier}")
    assert any(canonicalize_name(Requirement(w).name) == "pytest" for w in wanted), wanted
    venv = workspace / "plugin-venv"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(_sh([str(python), "-I", "-c", purelib]).stdout.strip())
    for dist in _closure(wanted):
        _link_distribution(dist, site)
        _console_scripts(dist, venv / "bin")
    _pip(python, "install", "-q", "--no-index", "--no-deps", str(wheel))
    _pip(python, "check")
    return venv


def test_the_readmes_plugin_example_runs_as_written(plugin_venv, workspace):
    """The README's ``test_agent.py``, run with the README's command in a venv made from
    the wheel and the documented extra, prints the README's output and exits 10."""
    section = _plugin_section()
    example = section.split("`test_agent.py`", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("```\n$ ", 1)[1].split("```", 1)[0].splitlines()
    command, expected = shown[0], shown[1:]
    assert command == "pytest --passk-log runs.jsonl", command
    cwd = workspace / "newcomer"
    cwd.mkdir()
    (cwd / "test_agent.py").write_text(example, encoding="utf-8")
    env = {**_user_env(plugin_venv), "COLUMNS": "80"}  # a terminal's width, as shown
    ran = _sh(command.split(), cwd=cwd, env=env, check=False)
    assert ran.returncode == 10, ran.stdout + ran.stderr
    spec = importlib.util.spec_from_file_location(
        "update_readme_outputs", ROOT / "scripts" / "update_readme_outputs.py")
    readme = sys.modules.get("update_readme_outputs")
    if readme is None:
        readme = importlib.util.module_from_spec(spec)
        sys.modules["update_readme_outputs"] = readme
        spec.loader.exec_module(readme)
    actual = (ran.stdout + ran.stderr).splitlines()
    assert readme.matches(expected, actual), readme.diff(expected, actual)
    assert len((cwd / "runs.jsonl").read_text().splitlines()) == 24 + 1  # the header, 24 runs
