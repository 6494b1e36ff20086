"""The type checker as a ratchet. mypy (configured in pyproject.toml, version pinned in the
test extras) checks the whole package: `vault/` and `engine/` under the strict flags, where
any error fails; every other package may only lower its error count, recorded per package
in tests/mypy_baseline.json. A failure prints the errors that are new (compared with the
baseline's messages, without line numbers, so moved code does not count as new).

Also a script, which `make lint` runs:
    python tests/test_types.py            # check, print new errors, exit 1 on a rise
    python tests/test_types.py --update   # write today's errors as the new baseline
Lower the baseline (`--update`) whenever a package's count falls, so it cannot rise back.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tests" / "mypy_baseline.json"
STRICT = ("engine", "vault")
"""Packages held at zero errors (the strict flags apply to them: pyproject.toml)."""
CACHE = ROOT / ".mypy_cache"

_ERROR = re.compile(r"^(?P<path>recall_tui/[^:]+\.py):(?P<line>\d+): error: (?P<message>.*)$")


def package_of(path: str) -> str:
    """`recall_tui/engine/stages/fuse.py` -> `engine`; a top-level module -> `recall_tui`."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else "recall_tui"


def run_mypy() -> list[tuple[str, int, str]]:
    """(path, line, message with its code) of every error mypy reports on the package."""
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE), "--no-error-summary",
         "--no-pretty", "--show-error-codes", "--hide-error-context"],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    errors = []
    for line in r.stdout.splitlines():
        m = _ERROR.match(line)
        if m:
            errors.append((m["path"], int(m["line"]), m["message"]))
    if r.returncode not in (0, 1) or (r.returncode == 1 and not errors):
        raise RuntimeError(f"mypy did not run (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    return errors


def signature(path: str, message: str) -> str:
    """An error as the baseline keeps it: its file and message, no line number."""
    return f"{path}: {message}"


def counts(errors: list[tuple[str, int, str]]) -> dict[str, int]:
    return dict(sorted(Counter(package_of(p) for p, _, _ in errors).items()))


def compare(errors: list[tuple[str, int, str]], baseline: dict) -> tuple[list[str], list[str]]:
    """(failures, notes): a strict package with errors or a package above its baseline count
    fails, with its new errors listed; a count below the baseline is a note."""
    now = counts(errors)
    before: dict[str, int] = baseline["counts"]
    known = Counter(baseline["errors"])
    seen: Counter[str] = Counter()
    new: dict[str, list[str]] = {}
    for path, line, message in errors:
        sig = signature(path, message)
        seen[sig] += 1
        if seen[sig] > known[sig]:
            new.setdefault(package_of(path), []).append(f"{path}:{line}: {message}")
    failures, notes = [], []
    for pkg in sorted(set(now) | set(before)):
        n, was = now.get(pkg, 0), before.get(pkg, 0)
        if pkg in STRICT and n:
            failures.append(f"{pkg}: {n} error(s) in a strict package (must be 0)")
        elif n > was:
            failures.append(f"{pkg}: {n} errors, up from {was}")
        elif n < was:
            notes.append(f"{pkg}: {n} errors, down from {was}: run `python tests/test_types.py "
                         "--update` to lower the baseline")
        if (pkg in STRICT and n) or n > was:
            failures += [f"  new: {e}" for e in new.get(pkg, [])] or [
                "  (no single new message: the same message now appears more often)"]
    return failures, notes


def write_baseline(errors: list[tuple[str, int, str]]) -> None:
    data = {
        "about": "mypy errors per package (tests/test_types.py); counts may only fall",
        "counts": counts(errors),
        "errors": sorted(signature(p, m) for p, _, m in errors),
    }
    BASELINE.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def test_mypy_errors_do_not_rise():
    failures, notes = compare(run_mypy(), json.loads(BASELINE.read_text(encoding="utf-8")))
    for note in notes:
        print(note)
    assert not failures, "mypy ratchet:\n" + "\n".join(failures)


def test_the_ratchet_catches_a_new_error():
    """A new error in a strict package, and one more in a ratcheted package, both fail and
    are printed; the same errors at other lines do not count as new."""
    baseline = {"counts": {"engine": 0, "tui": 1},
                "errors": ["recall_tui/tui/app.py: old [attr-defined]"]}
    moved = [("recall_tui/tui/app.py", 99, "old [attr-defined]")]
    assert compare(moved, baseline) == ([], [])
    worse = moved + [("recall_tui/tui/app.py", 7, "fresh [arg-type]"),
                     ("recall_tui/engine/pipeline.py", 3, "bad [return-value]")]
    failures, _ = compare(worse, baseline)
    assert "engine: 1 error(s) in a strict package (must be 0)" in failures
    assert "  new: recall_tui/engine/pipeline.py:3: bad [return-value]" in failures
    assert "tui: 2 errors, up from 1" in failures
    assert "  new: recall_tui/tui/app.py:7: fresh [arg-type]" in failures
    assert compare([], baseline)[1] == [
        "tui: 0 errors, down from 1: run `python tests/test_types.py --update` to lower the "
        "baseline"]


if __name__ == "__main__":
    found = run_mypy()
    if "--update" in sys.argv[1:]:
        write_baseline(found)
        print(f"wrote {BASELINE.relative_to(ROOT)}: {counts(found)}")
        sys.exit(0)
    fails, remarks = compare(found, json.loads(BASELINE.read_text(encoding="utf-8")))
    print("\n".join(remarks + fails) or f"mypy: {counts(found)} (no rise)")
    sys.exit(1 if fails else 0)
