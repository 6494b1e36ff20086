"""`recall-tui bench --hook`: whole-process wall time of `recall-tui hook prompt-submit`, as
Claude Code pays it (a fresh Python process reading the payload on stdin and printing JSON,
started by the command `hook install` writes: `python -S .../recall_tui/launcher.py ...`),
in three situations: answered by the warm service, recalled in-process (no service), and with
a hung service (stopped with SIGSTOP: its socket still accepts connections, nothing answers),
where the hook must give up after its wait (`client.hook_timeout()`) and recall in its own
process; the prompts after that skip the service for `client.UNRESPONSIVE_SKIP_S`. Also the
warm service's resident memory (VmRSS) after the runs, the service's own timing of each hook
request's phases (`{"op": "stats"}`: p50 per phase, `service_phases_ms`), and once it has dropped its model
(`model_idle_s` without a request, shortened here), with the time of the first prompt after
that (which loads the model again). The vault is copied first, so the
benchmark's own service and log never touch the user's vault.

Every run reuses one session id, so it passes `--repeat-window 0`: repeat suppression would
otherwise leave later prompts nothing new to inject, and the runs would measure less work.

The package's bytecode is written first (`compile_package`), as an install does: where
PYTHONDONTWRITEBYTECODE is set and the package is a source checkout, every hook would
otherwise compile each module it imports from source (~10 ms a hook under load), which no
installed hook pays. The JSON's `bytecode` says whether it was written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recall_tui.agent import client
from recall_tui.agent.install import executable, hook_argv

DEFAULT_PROMPTS = ("postgres upgrade", "kubectl production", "proxmox upgrade on atlas",
                   "who is our DBA", "stripe webhook retries", "deploy on friday")
SESSION = "bench-hook-0001"


def payload(vault: Path, prompt: str) -> str:
    """A UserPromptSubmit payload as Claude Code's hooks reference documents it."""
    return json.dumps({"session_id": SESSION,
                       "transcript_path": f"{Path.home()}/.claude/projects/bench/{SESSION}.jsonl",
                       "cwd": str(vault), "permission_mode": "default",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt})


class Run:
    """One hook process: its wall time, exit code, whether it injected memories, its stderr,
    and its CPU time (user + system: what the load on a shared machine disturbs less)."""

    def __init__(self, ms: float, code: int, injected: bool, stderr: str, cpu_ms: float = 0.0):
        self.ms, self.code, self.injected, self.stderr = ms, code, injected, stderr
        self.cpu_ms = cpu_ms


def _children_cpu_ms() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (ru.ru_utime + ru.ru_stime) * 1000


def _one(vault: Path, prompt: str, *extra: str, src: str | None = None) -> Run:
    """One `hook prompt-submit` process, run as `hook install` writes the command (this
    Python with `-S` on the package's launcher, `install.hook_argv`); `src`: the `recall-tui`
    script importing the package from that folder instead (an older checkout's command)."""
    env = dict(os.environ, RECALL_TUI_AGENT_LOG="on")
    args = ["--budget-ms", "1e9", "--repeat-window", "0", *extra]
    if src:
        env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
        cmd = [*executable(), "hook", "prompt-submit", "--vault", str(vault), *args]
    else:
        cmd = hook_argv(vault, "prompt-submit", args)
    c0, t0 = _children_cpu_ms(), time.perf_counter()
    r = subprocess.run(cmd, input=payload(vault, prompt), capture_output=True, text=True, env=env,
                       timeout=300)
    ms, cpu = (time.perf_counter() - t0) * 1000, _children_cpu_ms() - c0
    try:
        ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        ctx = ""
    return Run(ms, r.returncode, bool(ctx.strip()), r.stderr, cpu)


def _bare(*flags: str) -> Run:
    """`python [FLAGS] -c pass`: the interpreter's own start, beside the hook's."""
    c0, t0 = _children_cpu_ms(), time.perf_counter()
    subprocess.run([sys.executable, *flags, "-c", "pass"], check=True)
    return Run((time.perf_counter() - t0) * 1000, 0, False, "", _children_cpu_ms() - c0)


def _stats(runs: list[Run]) -> dict[str, Any]:
    xs = sorted(r.ms for r in runs)
    return {"n": len(xs), "min": round(xs[0], 1), "p50": round(statistics.median(xs), 1),
            "p95": round(xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))], 1),
            "max": round(xs[-1], 1), "injected": sum(r.injected for r in runs),
            "cpu_p50": round(statistics.median(r.cpu_ms for r in runs), 1)}


def rss_mb(pid: int) -> float | None:
    """A process's resident memory (VmRSS) in MB; None when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def compile_package(src: str | os.PathLike[str] | None = None) -> bool:
    """Write the bytecode of the recall_tui package (this one, or the one in folder `src`)
    beside its sources, as pip does at install time; False when it could not."""
    import compileall

    import recall_tui

    pkg = Path(src) / "recall_tui" if src else Path(recall_tui.__file__).parent
    try:
        return bool(compileall.compile_dir(str(pkg), quiet=2))
    except OSError:
        return False


def hook_bench(vault: str | os.PathLike, *, runs: int = 20, embedder: str | None = None,
               in_process_runs: int = 3, hung_runs: int = 3, baseline_src: str | None = None,
               model_idle_s: float = 15.0, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Time the hook (see the module docstring); with `baseline_src`, the warm runs alternate
    between this package and the one in that folder (same service, same minutes)."""
    src = Path(vault)
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp:
        work = Path(tmp) / "v"
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("serve.sock", "serve.lock",
                                                                 "serve.unresponsive", "agent"))
        extra = ("--embedder", embedder) if embedder else ()
        prompts = [DEFAULT_PROMPTS[i % len(DEFAULT_PROMPTS)] for i in range(max(runs, 1))]
        out: dict[str, Any] = {"vault": str(src), "runs": runs, "loadavg_before": _load(),
                               "bytecode": compile_package() and (not baseline_src
                                                                  or compile_package(baseline_src)),
                               "service_timeout_s": client.hook_timeout(),
                               "unresponsive_skip_s": client.UNRESPONSIVE_SKIP_S}
        log("in-process (no service) ...")
        cold = [_one(work, prompts[i % len(prompts)], "--no-serve", *extra)
                for i in range(in_process_runs)]
        out["in_process_ms"] = _stats(cold)
        log("starting the service ...")
        client.start_detached(work, idle_s=300, model_idle_s=model_idle_s)
        ping = client.wait_ready(work, timeout=600)
        if ping is None:
            raise RuntimeError(f"the recall service for {work} did not come up")
        pid = int(ping["pid"])
        log("waiting for the service to make the vault's vectors ...")
        deadline = time.monotonic() + 1800
        while ping.get("embedding") is not None and time.monotonic() < deadline:
            time.sleep(0.5)  # "warm" means the whole pipeline, vector channel included
            ping = client.request(work, {"op": "ping"}, timeout=30)
        out["vectors_ready"] = ping.get("embedding") is None
        out["service_rss_mb_ready"] = rss_mb(pid)
        _one(work, "warm-up", *extra)
        log(f"{runs} warm hooks ...")
        warm: list[Run] = []
        base: list[Run] = []
        bare: list[Run] = []
        bare_s: list[Run] = []
        for p in prompts[:runs]:
            warm.append(_one(work, p, *extra))
            if baseline_src:
                base.append(_one(work, p, *extra, src=baseline_src))
            bare.append(_bare())
            bare_s.append(_bare("-S"))
        out["warm_ms"] = _stats(warm)
        if base:
            out["baseline_src"] = baseline_src
            out["baseline_warm_ms"] = _stats(base)
        out["service_rss_mb_after"] = rss_mb(pid)
        try:  # the service's own timing of each hook request (both sides of an A/B)
            out["service_phases_ms"] = client.request(work, {"op": "stats"}, timeout=30).get("hook_phases")
        except client.ServiceUnavailable:
            out["service_phases_ms"] = None
        log(f"waiting for the service to drop its model ({model_idle_s:g} s idle) ...")
        deadline = time.monotonic() + model_idle_s + 120
        ping = client.request(work, {"op": "ping"}, timeout=30)
        while ping.get("model_loaded") and time.monotonic() < deadline:
            time.sleep(0.5)
            ping = client.request(work, {"op": "ping"}, timeout=30)  # (a ping is no use of it)
        out["model_idle_s"] = model_idle_s
        out["model_released"] = not ping.get("model_loaded")
        out["service_rss_mb_idle"] = rss_mb(pid)
        out["after_release_ms"] = _stats([_one(work, "who rotates the certificates", *extra)])
        hung_first: list[Run] = []
        hung_next: list[Run] = []
        if hung_runs > 0:
            log(f"hung service (SIGSTOP): {hung_runs} prompts that wait for it, "
                f"{hung_runs} after it was marked unresponsive ...")
            marker = client.recall_dir(work) / "serve.unresponsive"
            os.kill(pid, signal.SIGSTOP)
            try:
                for i in range(hung_runs):
                    marker.unlink(missing_ok=True)  # each of these pays the wait
                    hung_first.append(_one(work, prompts[i % len(prompts)], *extra))
                for i in range(hung_runs):  # the marker is set: these skip the service
                    hung_next.append(_one(work, prompts[i % len(prompts)], *extra))
            finally:
                os.kill(pid, signal.SIGCONT)
                marker.unlink(missing_ok=True)
            out["hung_first_ms"] = _stats(hung_first)
            out["hung_next_ms"] = _stats(hung_next)
            out["hung_stderr"] = hung_first[0].stderr.strip().splitlines()[:2]
        out["exit_codes"] = sorted({r.code for r in cold + warm + base + hung_first + hung_next})
        out["bare_python_ms"] = _stats(bare)["p50"]  # each p50 of as many runs, taken between
        out["bare_python_S_ms"] = _stats(bare_s)["p50"]  # the warm hooks
        out["bare_python_cpu_ms"] = _stats(bare)["cpu_p50"]
        out["bare_python_S_cpu_ms"] = _stats(bare_s)["cpu_p50"]
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


def _line(name: str, s: dict[str, Any]) -> str:
    return (f"  {name}: p50 {s['p50']:.0f} ms  p95 {s['p95']:.0f} ms  min {s['min']:.0f}  "
            f"max {s['max']:.0f}  cpu p50 {s.get('cpu_p50', float('nan')):.0f} ms  "
            f"({s['injected']} of {s['n']} injected memories)")


def format_hook_bench(r: dict[str, Any]) -> str:
    w = r["warm_ms"]
    lines = [f"hook prompt-submit on {r['vault']} (whole process, wall time incl. Python start)",
             _line("warm service        ", r["warm_ms"]),
             _line("in-process, no serve", r["in_process_ms"])]
    if "baseline_warm_ms" in r:
        b = r["baseline_warm_ms"]
        lines.insert(2, _line("warm, baseline      ", b)
                     + f"\n    baseline / this: p50 {b['p50'] / w['p50']:.2f}x, p95 {b['p95'] / w['p95']:.2f}x"
                     + (f", cpu p50 {b['cpu_p50'] / w['cpu_p50']:.2f}x" if w.get("cpu_p50") else "")
                     + f" (baseline {r['baseline_src']})")
    if "hung_first_ms" in r:
        lines += [_line(f"hung, waits {r['service_timeout_s']:g} s".ljust(20), r["hung_first_ms"]),
                  _line("hung, marked skip   ", r["hung_next_ms"])]
    if "after_release_ms" in r:
        lines.append(_line("first after release ", r["after_release_ms"]))
    phases = r.get("service_phases_ms") or {}
    if phases:
        lines.append("  service, per hook request (p50 ms): " + ", ".join(
            f"{k} {v['p50']:g}" for k, v in phases.items()) + "  (record: after the answer)")
    lines += [f"  service RSS: {r['service_rss_mb_ready']} MB ready, {r['service_rss_mb_after']} MB "
              "after the warm runs"
              + (f", {r['service_rss_mb_idle']} MB idle (model "
                 f"{'released' if r['model_released'] else 'NOT released'} after "
                 f"{r['model_idle_s']:g} s)" if "service_rss_mb_idle" in r else ""),
              f"  bytecode written first: {r.get('bytecode')}",
              f"  bare `python -c pass`: p50 {r['bare_python_ms']:.0f} ms (cpu "
              f"{r.get('bare_python_cpu_ms', float('nan')):.0f}), `python -S -c pass` p50 "
              f"{r.get('bare_python_S_ms', float('nan')):.0f} ms (cpu "
              f"{r.get('bare_python_S_cpu_ms', float('nan')):.0f}), between the warm runs; "
              f"exit codes {r['exit_codes']}",
              f"  load average before {r['loadavg_before']}  after {r['loadavg_after']}"]
    return "\n".join(lines)
