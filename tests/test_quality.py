"""The headline claim of the engine issue and of issue 14, measured by the real `eval` command
with the real local embedder:

- on the sample vault's judged queries, our `default` preset beats every seed system's preset
  on recall@5 and MRR (the index comes pre-built from conftest);
- on the chat-observation vault (`sample-vault-chat/`: short observations, no recall_when, no
  topic keys, no edges, memories years old; its index is built by `eval` on a fresh copy), it
  beats them on recall@10 and MRR too, except for one known gap: memoryvault's MRR (and a tie
  on recall@10), marked as a strict expected failure so that closing the gap shows up
  (docs/evaluation.md, "Where default stands")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PRESETS = ("default", "bastra", "abmind", "memoryvault", "memoturn", "memoria")
CHAT_VAULT = Path(__file__).resolve().parent.parent / "sample-vault-chat"


def _eval(vault: Path, queries: Path, k: int) -> dict:
    cmd = [str(Path(sys.executable).with_name("recall-tui")), "eval", "--vault", str(vault),
           "--queries", str(queries), "--k", str(k),
           "--now", "2026-11-21T09:00:00Z", "--embedder", "local", "--json"]
    for p in PRESETS:
        cmd += ["--preset", p]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["embedder"] == "local"  # vectors really took part
    return report


def _means(report: dict) -> dict[str, dict[str, float]]:
    return {name: report["presets"][name]["means"] for name in PRESETS}


def test_default_beats_every_seed_preset_on_recall_at_5_and_mrr(vault_copy):
    report = _eval(vault_copy, vault_copy / "golden.jsonl", 5)
    means = _means(report)
    assert len(report["presets"]["default"]["queries"]) >= 60
    for name in PRESETS[1:]:
        assert means["default"]["recall"] > means[name]["recall"], (name, means)
        assert means["default"]["mrr"] > means[name]["mrr"], (name, means)


@pytest.fixture(scope="module")
def chat_report(tmp_path_factory) -> dict:
    dst = tmp_path_factory.mktemp("chat") / "vault"
    shutil.copytree(CHAT_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    report = _eval(dst, dst / "questions.jsonl", 10)
    assert len(report["presets"]["default"]["queries"]) >= 120
    return report


@pytest.mark.parametrize("seed", [p for p in PRESETS[1:] if p != "memoryvault"])
def test_default_beats_seed_preset_on_the_chat_vault(chat_report, seed):
    means = _means(chat_report)
    assert means["default"]["recall"] > means[seed]["recall"], (seed, means)
    assert means["default"]["mrr"] > means[seed]["mrr"], (seed, means)


@pytest.mark.xfail(strict=True, reason="known gap (docs/evaluation.md): on the chat vault "
                   "memoryvault's linear merge ties default on recall@10 and beats its MRR")
def test_default_beats_memoryvault_on_the_chat_vault(chat_report):
    means = _means(chat_report)
    assert means["default"]["recall"] > means["memoryvault"]["recall"], means
    assert means["default"]["mrr"] > means["memoryvault"]["mrr"], means
