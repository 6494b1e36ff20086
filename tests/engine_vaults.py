"""Small hand-built vaults for the engine tests, written as real files and read by the
real reader (no hand-made Memory records)."""

from __future__ import annotations

from pathlib import Path

import yaml

from recall_tui.vault.reader import read_vault


def write_vault(root: Path, files: dict[str, tuple[dict, str]]):
    """Write {relative path: (frontmatter, body)} under root and read it back."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, (fm, body) in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        text = "---\n" + yaml.safe_dump(fm, sort_keys=False, allow_unicode=True) + "---\n" + body
        p.write_text(text, encoding="utf-8")
    vault = read_vault(root)
    assert not [p for p in vault.problems if p.severity == "error"], vault.problems
    return vault


def mem(mid: str, title: str, summary: str = "", **kw) -> tuple[str, tuple[dict, str]]:
    """One memory file at `<mid>.md` (or kw['folder']/<mid>.md)."""
    folder = kw.pop("folder", "")
    body = kw.pop("body", summary or title)
    fm = {"id": mid, "title": title, "summary": summary or title,
          "created": kw.pop("created", "2026-11-01T10:00:00Z")}
    fm.update(kw)
    rel = f"{folder}/{mid}.md" if folder else f"{mid}.md"
    return rel, (fm, body + "\n")
