"""Time the first MCP `recall` on a fresh vault, as an agent pays it: the official `mcp` client
starts `recall-tui mcp --vault COPY` over stdio (a copy of the vault with no `.recall/`, so no
index and no vectors yet), and the clock runs from the client's `call_tool("recall")` to its
answer. Also reported: the handshake (process start to `initialize` answered), whether the
answer said the vector channel was still building, and the time until a recall runs with the
vectors. Each run uses a fresh copy; the vault given is never written.

    python scripts/bench_mcp_first_recall.py [--vault sample-vault] [--runs 3] [--embedder auto]
        [--no-wait-vectors] [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
QUERY = "postgres major upgrade analyze"


async def one(vault: Path, embedder: str, *, src: str | None = None,
              wait_vectors: bool = True) -> dict[str, float | bool]:
    env = dict(os.environ, RECALL_TUI_SERVE="off")
    if src:  # another copy of the package (a baseline for a before/after ratio)
        env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "recall_tui", "mcp", "--vault", str(vault),
                                         "--no-watch", "--embedder", embedder])
    t0 = time.perf_counter()
    async with Client(params) as client:
        t_init = time.perf_counter() - t0
        t1 = time.perf_counter()
        res = await client.call_tool("recall", {"query": QUERY, "k": 5})
        first = time.perf_counter() - t1
        building = "note" in (res.structured_content or {})
        while wait_vectors and "note" in (res.structured_content or {}):
            await asyncio.sleep(0.25)
            res = await client.call_tool("recall", {"query": QUERY, "k": 5})
        vectors = time.perf_counter() - t1
    return {"init_s": t_init, "first_s": first, "building": building,
            "vectors_s": vectors if wait_vectors else float("nan"), "total_s": t_init + first}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", default=str(ROOT / "sample-vault"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--embedder", default="auto", choices=("auto", "local", "none"))
    ap.add_argument("--no-wait-vectors", action="store_true",
                    help="stop after the first recall (do not wait for the vector channel)")
    ap.add_argument("--baseline-src", metavar="SRC",
                    help="also run the package found in SRC (its recall_tui/), alternating, "
                         "for a before/after ratio in the same minutes")
    args = ap.parse_args()
    print("load average at start:", _load(), flush=True)
    sides = [("this", None), *([("baseline", args.baseline_src)] if args.baseline_src else [])]
    rows: dict[str, list[dict[str, float | bool]]] = {name: [] for name, _ in sides}
    for i in range(args.runs):
        for name, src in sides:
            with tempfile.TemporaryDirectory(prefix="mcp-first-") as tmp:
                copy = Path(tmp) / "vault"
                shutil.copytree(args.vault, copy, ignore=shutil.ignore_patterns(".recall"))
                row = asyncio.run(one(copy, args.embedder, src=src,
                                      wait_vectors=not args.no_wait_vectors))
            rows[name].append(row)
            print(f"run {i + 1} {name}: handshake {row['init_s']:.2f} s, first recall "
                  f"{row['first_s']:.2f} s (vector channel building: "
                  f"{'yes' if row['building'] else 'no'}), spawn to first answer "
                  f"{row['total_s']:.2f} s, with vectors after {row['vectors_s']:.1f} s; "
                  f"load {_load()}", flush=True)
    for name, rs in rows.items():
        med = {k: statistics.median(float(r[k]) for r in rs)
               for k in ("init_s", "first_s", "total_s", "vectors_s")}
        print(f"{name}, median of {len(rs)}: handshake {med['init_s']:.2f} s, first recall "
              f"{med['first_s']:.2f} s, spawn to first answer {med['total_s']:.2f} s, "
              f"with vectors after {med['vectors_s']:.1f} s")
    print("load average at end:", _load())
    return 0


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


if __name__ == "__main__":
    raise SystemExit(main())
