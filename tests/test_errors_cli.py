"""`recall-tui errors` end to end on a small turn vault: the questions where the baseline
loses, grouped by category, both sides' hits with their judged grades; text output too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.engine_vaults import write_vault

BIN = Path(sys.executable).with_name("recall-tui")


def _errors(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "240"}  # one line a row, so the text can be matched
    return subprocess.run([str(BIN), "errors", *args], capture_output=True, text=True,
                          timeout=600, check=False, env=env)


def test_errors_lists_the_losses_side_by_side(tmp_path):
    root = tmp_path / "v"
    files = {f"s/t{i}.md": ({"id": f"t{i}", "session_id": "s",
                             "created": f"2025-03-01T10:0{i}:00Z"}, text + "\n")
             for i, text in enumerate(["Lena: we went to Lisbon in the end",
                                       "Tomas: Pepper the greyhound hates stairs",
                                       "Lena: the ferry to Porto was cancelled"])}
    write_vault(root, files)
    (root / "q.jsonl").write_text("\n".join(json.dumps(q) for q in [
        {"query": "lisbon", "relevant": ["t0"], "category": "single"},
        {"query": "greyhound stairs", "relevant": {"t1": 2}, "category": "single"},
        {"query": "nothing matches this", "relevant": ["t2"], "category": "temporal"},
    ]) + "\n", encoding="utf-8")
    blind = tmp_path / "blind.toml"  # finds nothing: loses every question default answers
    blind.write_text('extends = "default"\n[keyword]\nenabled = false\n[fuzzy]\nenabled = false\n',
                     encoding="utf-8")
    args = ["--vault", str(root), "--queries", str(root / "q.jsonl"), "--base", str(blind),
            "--preset", "default", "--now", "2026-11-21T09:00:00Z", "--embedder", "none"]
    r = _errors(*args, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["baseline"] == str(blind) and doc["compared"] == ["default"]
    rows = doc["categories"]["single"]
    assert "temporal" not in doc["categories"]  # both found nothing there: a tie
    assert [x["query"] for x in rows] == ["lisbon", "greyhound stairs"]
    first = rows[0]
    assert first["lost_on"] == "recall" and first["baseline"]["hits"] == []
    assert first["other"]["recall"] == 1.0
    assert first["other"]["hits"][0] == {"id": "t0", "grade": 1,
                                         "text": "Lena: we went to Lisbon in the end"}
    text = _errors(*args)
    assert text.returncode == 0 and "loses 2 times on 3 questions" in text.stdout
    assert "== single: 2" in text.stdout and "* t0: Lena: we went to Lisbon" in text.stdout
    bad = _errors("--vault", str(tmp_path / "missing"))
    assert bad.returncode == 2 and "no such vault folder" in bad.stderr
