"""sample-vault-turns is what scripts/make_turns_vault.py writes, byte for byte, and reads
cleanly: every question judges turns the vault has, in each of the four categories."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from recall_tui.vault.reader import read_vault

ROOT = Path(__file__).resolve().parent.parent
VAULT = ROOT / "sample-vault-turns"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".recall" not in p.parts and p.name != "README.md"}


def test_script_regenerates_the_vault_identically(tmp_path):
    spec = importlib.util.spec_from_file_location("make_turns_vault",
                                                  ROOT / "scripts" / "make_turns_vault.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    turns, questions = mod.build(tmp_path / "out")
    assert (turns, questions) == (323, 87)
    assert _files(tmp_path / "out") == _files(VAULT)


def test_vault_reads_and_questions_judge_real_turns():
    vault = read_vault(VAULT)
    assert not vault.problems
    assert len([m for m in vault.memories.values() if m.session_id]) == 323  # + README
    cats: dict[str, int] = {}
    for line in (VAULT / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        cats[q["category"]] = cats.get(q["category"], 0) + 1
        for mid in q["relevant"]:
            m = vault.memories[mid]
            assert m.session_id and m.body.split(":")[0] in {"Priya", "Dan", "Nour", "Kasia",
                                                               "Rafa", "June"}
    assert set(cats) == {"single", "multi-hop", "temporal", "open-domain"}
    assert min(cats.values()) >= 20


HELDOUT = ROOT / "sample-vault-turns-heldout"


def test_heldout_script_regenerates_its_vault_identically(tmp_path):
    """The held-out vault (never tuned on) is what its own script writes, through the same
    writer: the two generators share `build`."""
    spec = importlib.util.spec_from_file_location(
        "make_turns_heldout_vault", ROOT / "scripts" / "make_turns_heldout_vault.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["x", str(tmp_path / "out")]) == 0
    assert _files(tmp_path / "out") == _files(HELDOUT)
    assert len([f for f in _files(HELDOUT) if f.endswith(".md")]) == 385


def test_heldout_vault_is_apart_from_the_tuning_vaults():
    """Its questions judge its own turns, by its own speakers, in the four categories; no turn
    id or speaker is shared with sample-vault-turns."""
    vault = read_vault(HELDOUT)
    assert not vault.problems
    people = {"Margo", "Obi", "Hamid", "Lotte", "Gus", "Wren"}
    cats: dict[str, int] = {}
    for line in (HELDOUT / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        cats[q["category"]] = cats.get(q["category"], 0) + 1
        for mid in q["relevant"]:
            assert vault.memories[mid].body.split(":")[0] in people
    assert cats == {"single": 24, "multi-hop": 22, "temporal": 22, "open-domain": 18}
    tuning = read_vault(VAULT)
    assert not set(tuning.memories) - {"README"} & set(vault.memories)
    assert not {m.body.split(":")[0] for m in tuning.memories.values()} & people
