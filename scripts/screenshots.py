"""Write screenshots/*.svg: every named view of the terminal UI on the sample vault.

Deterministic: the clock is pinned (the sample vault's story ends 2026-11-20), live timings are
hidden (`stable_timings=True`), cursors do not blink, and the real engine runs on a temporary
copy of the sample vault (its index is built there, the sample vault is never written).

    python scripts/screenshots.py [--out screenshots] [--size 120x36] [VIEW ...]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINNED_NOW = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)


async def shoot(view, engine, vault: Path, out: Path, size: tuple[int, int]) -> Path:
    from recall_tui.tui.app import make_app

    engine.clear_cache()
    app = make_app(vault, now=PINNED_NOW, preset=view.preset, engine=engine, stable_timings=True)
    async with app.run_test(size=size) as pilot:
        await view.setup(pilot)
        target = out / f"{view.name}.svg"
        target.write_text(app.export_screenshot(title=f"recall-tui — {view.name}"),
                          encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("views", nargs="*", help="view names (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--size", default="120x36", help="terminal size WxH")
    parser.add_argument("--vault", type=Path, default=ROOT / "sample-vault")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from recall_tui.engine import open_engine
    from recall_tui.tui.screenshot_views import VIEWS, WALKTHROUGH

    known = {v.name: v for v in (*VIEWS, *WALKTHROUGH)}  # in this order: see WALKTHROUGH
    unknown = [n for n in args.views if n not in known]
    if unknown:
        print(f"screenshots: unknown view(s) {', '.join(unknown)}; known: {', '.join(known)}",
              file=sys.stderr)
        return 2
    width, _, height = args.size.partition("x")
    size = (int(width), int(height))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(args.vault, vault, ignore=shutil.ignore_patterns(".recall"))
        engine = open_engine(vault, preset="default", embedder="local")
        for name in sorted(args.views, key=list(known).index) if args.views else list(known):
            path = asyncio.run(shoot(known[name], engine, vault, args.out, size))
            print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
