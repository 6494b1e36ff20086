"""`recall-tui bench --hook`: whole-process wall time of `recall-tui hook prompt-submit`, as
Claude Code pays it (a fresh Python process reading the payload on stdin and printing JSON),
served by the warm service and recalled in-process. The vault is copied first, so the
benchmark's own service and log never touch the user's vault."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from recall_tui.agent import client

DEFAULT_PROMPTS = ("postgres upgrade", "kubectl production", "proxmox upgrade on atlas",
                   "who is our DBA", "stripe webhook retries", "deploy on friday")


def _one(vault: Path, prompt: str, *extra: str) -> tuple[float, int]:
    payload = json.dumps({"session_id": "bench", "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt, "cwd": str(vault)})
    env = dict(os.environ, RECALL_TUI_AGENT_LOG="on")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "recall_tui", "hook", "prompt-submit", "--vault",
                        str(vault), "--budget-ms", "1e9", *extra], input=payload,
                       capture_output=True, text=True, env=env, timeout=300)
    ms = (time.perf_counter() - t0) * 1000
    return ms, r.returncode


def _stats(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"n": len(xs), "min": round(xs[0], 1), "p50": round(statistics.median(xs), 1),
            "p95": round(xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))], 1),
            "max": round(xs[-1], 1)}


def hook_bench(vault: str | os.PathLike, *, runs: int = 20, embedder: str | None = None,
               in_process_runs: int = 3, log=lambda s: None) -> dict[str, Any]:
    src = Path(vault)
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp:
        work = Path(tmp) / "v"
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("serve.sock", "serve.lock", "agent"))
        extra = ("--embedder", embedder) if embedder else ()
        out: dict[str, Any] = {"vault": str(src), "runs": runs, "loadavg_before": _load()}
        log("in-process (no service) ...")
        cold = [_one(work, DEFAULT_PROMPTS[i % len(DEFAULT_PROMPTS)], "--no-serve", *extra)
                for i in range(in_process_runs)]
        out["in_process_ms"] = _stats([m for m, _ in cold])
        log("starting the service ...")
        client.start_detached(work, idle_s=120)
        if client.wait_ready(work, timeout=600) is None:
            raise RuntimeError(f"the recall service for {work} did not come up")
        _one(work, "warm-up", *extra)
        log(f"{runs} warm hooks ...")
        warm = [_one(work, DEFAULT_PROMPTS[i % len(DEFAULT_PROMPTS)], *extra) for i in range(runs)]
        out["warm_ms"] = _stats([m for m, _ in warm])
        out["exit_codes"] = sorted({c for _, c in cold + warm})
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        out["bare_python_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        out["loadavg_after"] = _load()
        try:
            client.request(work, {"op": "stop"}, timeout=10)
        except client.ServiceUnavailable:
            pass
        deadline = time.monotonic() + 30
        while client.is_starting_or_running(work) and time.monotonic() < deadline:
            time.sleep(0.1)
    return out


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def format_hook_bench(r: dict[str, Any]) -> str:
    w, c = r["warm_ms"], r["in_process_ms"]
    return "\n".join([
        f"hook prompt-submit on {r['vault']} (whole process, wall time incl. Python start)",
        f"  warm service : p50 {w['p50']:.0f} ms  p95 {w['p95']:.0f} ms  min {w['min']:.0f}  max {w['max']:.0f}  (n={w['n']})",
        f"  in-process   : p50 {c['p50']:.0f} ms  p95 {c['p95']:.0f} ms  (n={c['n']})",
        f"  bare `python -c pass`: {r['bare_python_ms']:.0f} ms; exit codes {r['exit_codes']}",
        f"  load average before {r['loadavg_before']}  after {r['loadavg_after']}",
    ])
