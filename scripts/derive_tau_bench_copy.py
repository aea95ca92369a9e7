"""Derive the book's minimal copy of tau-bench's GPT-4o airline run.

The book's notebook 07 reads a real run, tau-bench's published
``historical_trajectories/gpt-4o-airline.json`` (sierra-research/tau-bench,
commit 59a200c6d575d595120f1cb70fea53cef0632f6b, MIT licence). The original is
4 MB of conversations; the book needs three fields of each record. This script
keeps, for every record and in the original order, ``task_id``, ``reward`` and
``trial`` (tau-bench's own field names and format: a JSON array of run
records, which ``passk.results.read.read_results`` reads as a tau-bench file), drops
``info`` and ``traj``, and copies tau-bench's LICENSE beside the result.

Usage (from the repository's root)::

    python scripts/derive_tau_bench_copy.py            # write book/data/tau-bench/
    python scripts/derive_tau_bench_copy.py --check    # exit 1 if the shipped copy differs

``tests/test_notebook07_data.py`` checks that the shipped copy is exactly what
this script derives from the original (when the original is at hand).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: Where the original lives on the project's machines (beside the repository).
SOURCE = ROOT.parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"
SOURCE_LICENSE = SOURCE.with_name("LICENSE")

#: Where the book reads its copy.
TARGET = ROOT / "book" / "data" / "tau-bench" / "gpt-4o-airline-rewards.json"
TARGET_LICENSE = TARGET.with_name("LICENSE")

#: SHA-256 of ``historical_trajectories/gpt-4o-airline.json`` at commit
#: 59a200c6d575d595120f1cb70fea53cef0632f6b (git blob a5f0d91569e740b949b37a181993b3f1822a86f4).
SOURCE_SHA256 = "e9e6c0297660c537f83d4fd9c476ce7a9a86ecd2784874b7bfc13be598e37bfa"

#: The fields kept, in tau-bench's order.
KEPT = ("task_id", "reward", "trial")


def sha256(path: Path) -> str:
    """The file's SHA-256, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def derive(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record with only ``task_id``, ``reward`` and ``trial``, in the original order.

    Raises ValueError naming the record when a kept field is missing.

    Examples
    --------
    >>> derive([{"task_id": 3, "reward": 1.0, "info": {}, "traj": [], "trial": 0}])
    [{'task_id': 3, 'reward': 1.0, 'trial': 0}]
    """
    out = []
    for i, record in enumerate(records):
        missing = [name for name in KEPT if name not in record]
        if missing:
            raise ValueError(f"record {i} lacks {'field' if len(missing) == 1 else 'fields'} "
                             f"{missing}")
        out.append({name: record[name] for name in KEPT})
    return out


def derive_text(source: Path = SOURCE) -> str:
    """The shipped file's text: a JSON array, one record a line (small diffs, easy to read).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.json"
    >>> _ = p.write_text(json.dumps([{"task_id": 0, "reward": 0.0, "traj": [], "trial": 1}]))
    >>> print(derive_text(p), end="")
    [
      {"task_id": 0, "reward": 0.0, "trial": 1}
    ]
    """
    records = json.loads(source.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise ValueError(f"{source}: expected a JSON array of tau-bench runs")  # noqa: TRY004
    lines = ",\n".join("  " + json.dumps(r) for r in derive(records))
    return f"[\n{lines}\n]\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help=f"tau-bench's gpt-4o-airline.json (default {SOURCE})")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 when the shipped copy differs")
    args = parser.parse_args(argv)
    source: Path = args.source
    if not source.is_file():
        print(f"{source}: no such file", file=sys.stderr)
        return 2
    digest = sha256(source)
    if digest != SOURCE_SHA256:
        print(f"{source}: SHA-256 {digest} is not that of the file at the recorded commit "
              f"({SOURCE_SHA256})", file=sys.stderr)
        return 2
    text = derive_text(source)
    license_text = source.with_name("LICENSE").read_text(encoding="utf-8")
    if args.check:
        same = (TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
                and TARGET_LICENSE.is_file()
                and TARGET_LICENSE.read_text(encoding="utf-8") == license_text)
        print("the shipped copy is the derivation" if same else "the shipped copy differs")
        return 0 if same else 1
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    shutil.copyfile(source.with_name("LICENSE"), TARGET_LICENSE)
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(text.splitlines()) - 2} records) "
          f"and {TARGET_LICENSE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
