r"""Task ids that look alike (issue 36, class 6), attacked by class through the command line.

The attack: one flaky task (6 of 12 runs passed, blocked by the flakiness cap) written two
ways, its passing runs under ``deploy`` and its failing ones under an id drawn the same
(``deploy `` with a trailing space, ``dep\u200bloy`` with a zero-width space, ``dеploy``
with a Cyrillic ``е``, ...), becomes two steady tasks (6/6 and 0/6) that clear the gate.
The defence, for each class and each variant, on JSON Lines and CSV results, through
``passk report`` and ``passk gate`` in every format (text, ``--markdown``, ``--json``,
``--html``):

- without a policy the two ids are named in a note in every format (the verdict is the
  evidence's as given: the gate need not block), each shown so that it cannot be read as
  the other;
- no character that draws nothing (controls but the newline, format and bidi characters,
  tags, separators, spaces other than the ASCII space, surrogates, private-use and
  unassigned code points) reaches the text, Markdown or HTML: the oracle is
  :func:`unicodedata.category` and the code points the issue names, not the code's own
  predicate;
- the JSON keeps each id exactly;
- under a policy (a ``passk.toml`` in a fresh repository) both commands refuse the evidence
  with exit 2 and a one-line reason naming the ids; a policy whose own ``[tasks] ids``
  list holds two ids that look alike is refused too.

The reference is the honest evidence: one ``deploy`` with 6 of 12 runs passed, which
the gate blocks.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passk.analysis.report import build_report
from passk.cli.commands import main
from passk.results.ids import lookalike_groups, lookalike_note, lookalike_refusal, show_id
from passk.results.read import read_results

#: Each class: (the honest id, the look-alike ids that split it).
CLASSES = {
    "trailing space": ("deploy", ["deploy ", "deploy  ", "deploy\t"]),
    "leading space": ("deploy", [" deploy", "\tdeploy"]),
    "no-break space": ("run tests", ["run\u00a0tests", "run\u202ftests", "run\u3000tests"]),
    "zero-width": ("deploy", ["dep\u200bloy", "dep\u200cloy", "dep\u200dloy", "deploy\u2060",
                              "de\u2063ploy", "de\u00adploy"]),
    "byte-order mark": ("deploy", ["\ufeffdeploy", "deploy\ufeff"]),
    "bidi": ("deploy", ["deploy\u202e", "\u202ddeploy", "\u2066deploy\u2069", "de\u200eploy",
                        "de\u200fploy", "de\u061cploy"]),
    "tag characters": ("deploy", ["deploy\U000e0041", "\U000e0001deploy\U000e007f"]),
    "Cyrillic": ("deploy", ["d\u0435ploy", "depl\u043ey", "\u0501eploy", "DEPL\u041eY"]),
    "Greek": ("deploy", ["depl\u03bfy", "DEPL\u039fY", "\u0391PI"]),
    "case": ("deploy", ["Deploy", "DEPLOY", "dePloy"]),
    "compatibility forms": ("deploy", ["\uff44eploy", "\U0001d41deploy"]),
}
VARIANTS = [(cls, honest, odd) for cls, (honest, odds) in CLASSES.items() for odd in odds]
# the Greek capital Alpha's pair is "API"
VARIANTS = [(c, "API" if o == "\u0391PI" else h, o) for c, h, o in VARIANTS]

#: Code points the issue names, whatever their category.
NAMED = ({*range(0x200B, 0x2010), *range(0x2060, 0x2065), 0xFEFF, *range(0x202A, 0x202F),
          *range(0x2066, 0x206A), 0x061C} | set(range(0xE0000, 0xE0080)))
HIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def hidden(c: str) -> bool:
    """A character that must not reach text, Markdown or HTML raw (the newline apart)."""
    if c == "\n":
        return False
    cat = unicodedata.category(c)
    return ord(c) in NAMED or cat in HIDDEN_CATEGORIES or (cat == "Zs" and c != " ")


def shown(task_id: str) -> str:
    """The oracle's display of an id: each hidden character as a Python literal writes it,
    edge spaces as ``\\x20`` (backslashes do not occur in these ids)."""
    def esc(c: str) -> str:
        if c == "\t":
            return "\\t"
        code = ord(c)
        return (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                else f"\\U{code:08x}")
    body = "".join(esc(c) if hidden(c) else c for c in task_id)
    lead = len(body) - len(body.lstrip(" "))
    trail = len(body) - len(body.rstrip(" "))
    return "\\x20" * lead + body.strip(" ") + "\\x20" * trail


def passk(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def split_rows(honest: str, odd: str) -> list[tuple[str, int, bool]]:
    """The flaky task's 6 passing runs under ``honest``, its 6 failing runs under ``odd``,
    and two steady tasks: (task id, trial, success)."""
    rows = [(honest, i, True) for i in range(6)] + [(odd, i, False) for i in range(6, 12)]
    return rows + [(t, i, True) for t in ("build", "lint") for i in range(12)]


def write(path: Path, rows: list[tuple[str, int, bool]]) -> Path:
    if path.suffix == ".csv":
        with path.open("w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, quoting=csv.QUOTE_ALL)
            w.writerow(["task_id", "trial", "success"])
            w.writerows([(t, i, int(ok)) for t, i, ok in rows])
    else:
        path.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": ok}) + "\n"
                                for t, i, ok in rows), encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A fresh repository without a policy, the working directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def assert_nothing_hidden(text: str, where: str) -> None:
    bad = sorted({f"U+{ord(c):04X}" for c in text if hidden(c)})
    assert not bad, f"{where}: raw {', '.join(bad)}"


# --- the honest evidence: the reference ------------------------------------------------------

@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_the_honest_task_is_blocked_as_flaky(repo, suffix):
    rows = [("deploy", i, i < 6) for i in range(12)]
    rows += [(t, i, True) for t in ("build", "lint") for i in range(12)]
    status, out, _ = passk("gate", write(repo / f"honest{suffix}", rows))
    assert status == 1 and "task deploy: flakiness 1.000 exceeds the cap" in out
    assert "look alike" not in out


# --- without a policy: named in every format, nothing hidden reaches the page ---------------

@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
@pytest.mark.parametrize(("cls", "honest", "odd"), VARIANTS,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(VARIANTS)])
def test_split_task_is_named_in_every_format(repo, cls, honest, odd, suffix):
    path = write(repo / f"split{suffix}", split_rows(honest, odd))
    for command in ("report", "gate"):
        # text and Markdown: the note names both ids, each shown apart from the other
        for flag in ((), ("--markdown",)):
            status, out, err = passk(command, path, *flag)
            where = f"{cls} {odd!r} {command} {flag}"
            assert status == 0, (where, err)  # the split evidence clears the gate: named only
            assert "task ids that look alike are counted as separate tasks" in out, where
            note = next(line for line in out.splitlines() if "look alike" in line)
            assert shown(honest) in note and shown(odd) in note, (where, note)
            assert shown(odd) != shown(honest)
            table = [line for line in out.splitlines() if "stable-fail" in line]
            assert len(table) == 1 and shown(odd) in table[0], where  # the row, shown
            assert_nothing_hidden(out + err, where)
            for c in odd:  # a letter drawn like a Latin one is named in the note
                if not c.isascii() and not hidden(c) and c.lower() not in honest.lower():
                    assert f"U+{ord(c):04X} {unicodedata.name(c)}" in note, (where, c)
        # JSON: exact ids, the note in notes
        status, out, _ = passk(command, path, "--json")
        payload = json.loads(out)
        assert {honest, odd} <= {t["task_id"] for t in payload["tasks"]}
        notes = [n for n in payload["notes"] if "look alike" in n]
        assert len(notes) == 1 and shown(odd) in notes[0]
        # HTML: the note among the notes, the id shown in its row
        page_path = repo / f"{command}.html"
        status, _, _ = passk(command, path, "--html", page_path)
        page = page_path.read_text(encoding="utf-8")
        assert status == 0 and "task ids that look alike are counted as separate" in page
        assert f'<td class="id">{shown(odd)}</td>' in page.replace("&amp;", "&")
        assert_nothing_hidden(page, f"{cls} {odd!r} {command} --html")


def test_python_api_carries_the_note(repo):
    path = write(repo / "split.jsonl", split_rows("deploy", "dep\u200bloy"))
    fr = build_report(read_results(path))
    note = lookalike_note(["deploy", "dep\u200bloy"])
    assert note is not None and note in fr.to_dict()["notes"] and note in fr.results.notes
    assert "dep\\u200bloy" in str(fr) and "\u200b" not in str(fr)
    assert "dep\\u200bloy" in fr._repr_markdown_()


# --- under a policy: refused -----------------------------------------------------------------

POLICY = "[gate]\nbar = 0.7\ncap = 0.2\n"


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
@pytest.mark.parametrize(("cls", "honest", "odd"), VARIANTS,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(VARIANTS)])
def test_split_task_is_refused_under_a_policy(repo, cls, honest, odd, suffix):
    (repo / "passk.toml").write_text(POLICY, encoding="utf-8")
    path = write(repo / f"split{suffix}", split_rows(honest, odd))
    for command in ("report", "gate"):
        for flag in ((), ("--markdown",), ("--json",), ("--html", repo / "x.html")):
            status, out, err = passk(command, path, *flag)
            where = f"{cls} {odd!r} {command} {flag}"
            assert status == 2 and out == "", (where, out)
            lines = err.strip().splitlines()
            assert len(lines) == 1 and f"split{suffix}: task ids that look alike" in lines[0]
            assert shown(odd) in lines[0] and "write each task's id one way" in lines[0]
            assert_nothing_hidden(err, where)
    assert not (repo / "x.html").exists()


@pytest.mark.parametrize(("cls", "honest", "odd"), VARIANTS[::3],
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(VARIANTS[::3])])
def test_policy_task_set_with_lookalikes_is_refused(repo, cls, honest, odd):
    ids = json.dumps([honest, "build", odd])  # JSON strings are TOML basic strings
    (repo / "passk.toml").write_text(f"[tasks]\nids = {ids}\nruns = 6\n", encoding="utf-8")
    path = write(repo / "runs.jsonl", [(t, i, True) for t in ("build", "lint")
                                       for i in range(6)])
    status, out, err = passk("gate", path)
    assert status == 2 and out == ""
    assert "passk.toml: tasks.ids: task ids that look alike" in err and shown(odd) in err
    assert_nothing_hidden(err, cls)


def test_policy_listing_one_id_refuses_its_lookalike_in_the_evidence(repo):
    (repo / "passk.toml").write_text('[tasks]\nids = ["deploy", "build"]\nruns = 6\n',
                                     encoding="utf-8")
    path = write(repo / "runs.jsonl", [(t, i, True) for t in ("d\u0435ploy", "build")
                                       for i in range(6)])
    status, _, err = passk("gate", path)
    assert status == 2 and "runs.jsonl: task ids that look alike" in err
    assert "U+0435 CYRILLIC SMALL LETTER IE" in err


def test_distinct_ids_pass_under_a_policy(repo):
    (repo / "passk.toml").write_text(POLICY, encoding="utf-8")
    path = write(repo / "runs.jsonl", [(t, i, True) for t in ("deploy", "deploy-2", "build")
                                       for i in range(6)])
    status, out, _ = passk("gate", path)
    assert status == 0 and "look alike" not in out


# --- the functions, against independent oracles ----------------------------------------------

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u2066", "\u00ad",
             "\U000e0041", "\u180e", "\ufe0f", "\u034f"]


@given(st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=12),
       st.integers(0, 12), st.sampled_from(INVISIBLE))
def test_an_invisible_character_anywhere_makes_a_lookalike(base, at, z):
    odd = base[:at] + z + base[at:]
    assert lookalike_groups([base, "other-task", odd]) == [(base, odd)]
    assert show_id(odd) != show_id(base)
    assert all(not hidden(c) for c in show_id(odd))


@given(st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=12))
def test_case_and_edge_spaces_make_lookalikes_and_show_apart(base):
    variants = {base.upper(), base.lower(), f" {base}", f"{base} ", f"{base}\u00a0"} - {base}
    groups = lookalike_groups([base, *sorted(variants)])
    assert len(groups) == 1 and set(groups[0]) == {base, *variants}
    assert len({show_id(v) for v in [base, *variants]}) == len(variants) + 1


def test_groups_are_one_pass_and_ordered_by_first_sight():
    ids = [f"t{i}" for i in range(1000)] + ["T5", "t5 ", "T999"]
    assert lookalike_groups(ids) == [("t5", "T5", "t5 "), ("t999", "T999")]
    assert lookalike_groups(["a", "a", "b"]) == []  # the same id twice is one task


def test_show_id_keeps_a_backslash_apart_from_the_escape_it_would_spell():
    raw, escaped = "a\\u200b", "a\u200b"  # six characters vs a zero-width space
    assert show_id(raw) != show_id(escaped)
    assert show_id("C:\\work\\x") == "C:\\work\\\\x"  # doubled only before an escape letter
    assert show_id("a\\\u200b") != show_id("a\\u200b")


def test_refusal_and_note_name_every_group_up_to_five():
    ids = [f"t{i}" for i in range(8)] + [f"T{i}" for i in range(8)]
    why = lookalike_refusal(ids, "f.jsonl")
    assert why is not None and why.startswith("f.jsonl: task ids that look alike")
    assert "t4 and T4" in why and "t5 and T5" not in why and "and 3 more groups" in why
    assert "\n" not in why and lookalike_refusal(["a", "b"], "f") is None


def test_the_ascii_shortcut_finds_the_groups_the_skeletons_find():
    """Printable ASCII ids without spaces take a shortcut (no group when the case folds
    are as many as the ids); with a case collision they go the whole way. Either way the
    groups are those of grouping by :func:`skeleton` by hand."""
    import random

    from passk.results.ids import lookalike_groups, skeleton

    rng = random.Random(3)
    for _ in range(300):
        ids = ["".join(rng.choice("aAbB1-_") for _ in range(rng.randint(1, 3)))
               for _ in range(rng.randint(1, 25))]
        by_hand: dict[str, dict[str, None]] = {}
        for task_id in ids:
            by_hand.setdefault(skeleton(task_id), {})[task_id] = None
        expected = sorted(tuple(g) for g in by_hand.values() if len(g) > 1)
        assert sorted(lookalike_groups(ids)) == expected, ids
