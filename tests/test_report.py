"""Bug reports: every section present, figures taken from the real engine, the JSON twin
replayable; the `report` and `replay` commands; the report code stays headless."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections import Counter
from importlib import metadata

import pytest

from recall_tui.cli import main
from recall_tui.diagnostics.recording import (
    REPORT_KIND,
    RecordingError,
    load_report_traces,
    load_traces,
)
from recall_tui.diagnostics.report import (
    build_report,
    percentile,
    render_markdown,
    report_to_json,
    write_report,
)
from recall_tui.engine.trace import STAGE_ORDER
from tests.conftest import PINNED_NOW, SAMPLE_VAULT

QUERY = "postgres upgrade"
REPEAT = 4


@pytest.fixture(scope="module")
def vault_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("rep") / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".recall"))
    return root


@pytest.fixture(scope="module")
def engine(vault_dir):
    from recall_tui.engine import open_engine

    eng = open_engine(vault_dir, embedder="none")
    yield eng
    eng.index.close()


@pytest.fixture(scope="module")
def report(engine):
    return build_report(engine, QUERY, REPEAT, PINNED_NOW)


@pytest.fixture(scope="module")
def written(report, tmp_path_factory):
    return write_report(report, tmp_path_factory.mktemp("out"))


def test_report_files_are_twins(written):
    md, js = written
    assert md.name.startswith("report-") and md.suffix == ".md"
    assert js == md.with_suffix(".json")
    assert md.read_text(encoding="utf-8").startswith(f"# recall-tui report: `{QUERY}`")


def test_markdown_has_every_section(report, written, engine):
    text = written[0].read_text(encoding="utf-8")
    for heading in ("## Query", "## Versions", "## Platform", "## Vault", "## Index",
                    "## Timings (ms)", "## Top hits", "## Reader problems", "## Configuration",
                    "## Trace"):
        assert heading in text, heading
    # versions read from metadata (textual and rich are never imported by the engine)
    assert f"| textual | {metadata.version('textual')} |" in text
    assert f"| rich | {metadata.version('rich')} |" in text
    assert f"| onnxruntime | {metadata.version('onnxruntime')} |" in text
    import apsw

    assert f"| SQLite | {apsw.sqlite_lib_version()} |" in text
    assert "| sqlite-vec (vec_version) | v" in text
    assert "| embedder | none" in text
    # vault statistics match the vault itself
    by_type = Counter(m.type for m in engine.vault.memories.values())
    for t, n in by_type.items():
        assert f"| {t} | {n} |" in text
    assert f"| memories | {len(engine.vault.memories)} |" in text
    assert f"| supersession chains | {len(engine.vault.chains)} |" in text
    # every stage has a timing row, plus the total
    for name in STAGE_ORDER:
        assert f"\n| {name} | " in text, name
    assert "| **total** |" in text
    # hits with their explanations
    for h in report.trace.hits:
        assert f"| {h.rank} | {h.id} |" in text
        assert f"#### {h.rank}. `{h.id}`" in text
    assert "- channels: keyword raw" in text
    assert "- matched terms: " in text
    # configuration and full trace in collapsible blocks
    assert text.count("<details>") == 2 and text.count("</details>") == 2
    assert f"hash {report.config_hash}" in text
    assert engine.config.to_toml().strip() in text
    assert '"trace_version": 1' in text


def test_timings_come_from_the_traces(report):
    stages = {s.name: s for s in report.timings}
    assert list(stages) == [*STAGE_ORDER, "total"]
    kw = stages["keyword"]
    assert kw.cold_ms == report.trace.stage("keyword").ms
    assert kw.ran == REPEAT and kw.p50_ms > 0 and kw.p95_ms >= kw.p50_ms
    # a stage the configuration disables never ran and says why
    vec = stages["vector"]
    assert vec.ran == 0 and vec.note
    assert stages["total"].cold_ms == report.trace.total_ms


def test_json_twin_loads_back_into_the_engines_traces(report, written):
    data = json.loads(written[1].read_text(encoding="utf-8"))
    assert data["kind"] == REPORT_KIND
    assert data["query"] == QUERY and data["config_hash"] == report.config_hash
    assert {t["stage"] for t in data["timings"]} == {*STAGE_ORDER, "total"}
    traces = load_report_traces(written[1])
    assert [t.to_dict() for t in traces] == [report.trace.to_dict()]
    assert load_traces(written[1])[0].hits == traces[0].hits


def test_report_reflects_the_vaults_problems(tmp_path):
    from recall_tui.engine import open_engine

    root = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".recall"))
    (root / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    eng = open_engine(root, embedder="none")
    try:
        rep = build_report(eng, QUERY, 1, PINNED_NOW)
    finally:
        eng.index.close()
    assert any(p.startswith("broken.md") for p in rep.problems)
    text = render_markdown(rep)
    assert "## Reader problems (" in text and "- broken.md" in text
    assert json.loads(report_to_json(rep))["vault"]["problems"] == len(rep.problems) >= 1


def test_percentile_interpolates_like_numpy():
    import numpy as np

    xs = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]
    for q in (0, 50, 95, 100):
        assert percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)))


def test_report_command_writes_both_files(vault_dir, tmp_path, capsys):
    out = tmp_path / "reports"
    code = main(["report", QUERY, "--vault", str(vault_dir), "--embedder", "none",
                 "--repeat", "2", "--now", "2026-11-21T09:00Z", "--out", str(out), "--copy"])
    assert code == 0
    captured = capsys.readouterr()
    mds, jss = sorted(out.glob("report-*.md")), sorted(out.glob("report-*.json"))
    assert len(mds) == 1 and len(jss) == 1
    assert f"wrote {mds[0]}" in captured.out
    # --copy either reached a terminal or says why it could not
    assert ("clipboard with OSC 52" in captured.out) or ("could not copy" in captured.err)
    trace = load_report_traces(jss[0])[0]
    assert trace.query == QUERY and trace.now == "2026-11-21T09:00:00Z"


def test_report_command_rejects_unknown_preset(vault_dir, capsys):
    assert main(["report", QUERY, "--vault", str(vault_dir), "--preset", "nope"]) == 2
    assert "unknown preset 'nope'" in capsys.readouterr().err


def test_osc52_sequence_carries_the_text():
    from recall_tui.cli.report import osc52_sequence

    seq = osc52_sequence("héllo | world").decode("ascii")
    assert seq.startswith("\x1b]52;c;") and seq.endswith("\x07")
    assert base64.b64decode(seq[7:-1]).decode("utf-8") == "héllo | world"
    wrapped = osc52_sequence("x", tmux=True).decode("ascii")
    assert wrapped.startswith("\x1bPtmux;\x1b\x1b]52;c;") and wrapped.endswith("\x1b\\")


def test_replay_print_on_a_report(written, report, capsys):
    assert main(["replay", "--print", str(written[1])]) == 0
    out = capsys.readouterr().out
    assert f"{written[1]}: 1 trace" in out and repr(QUERY) in out
    for h in report.trace.hits:
        assert h.id in out


@pytest.mark.parametrize("content, reason", [
    ('{"kind": "something-else"}', "not a recall-tui report"),
    ('{"kind": "recall-tui-report", "report_version": 7, "traces": []}', "report_version 7"),
    ('{"kind": "recall-tui-report", "report_version": 1, "traces": []}', "holds no traces"),
    ('[1, 2]', "got a JSON list"),
])
def test_bad_report_files_are_named_with_reason(tmp_path, content, reason, capsys):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RecordingError) as err:
        load_traces(path)
    assert str(path) in str(err.value) and reason in str(err.value)
    assert main(["replay", "--print", str(path)]) == 2
    assert reason in capsys.readouterr().err


def test_report_trace_with_future_version(written, tmp_path):
    data = json.loads(written[1].read_text(encoding="utf-8"))
    data["traces"][0]["trace_version"] = 2
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordingError, match=r"future\.json: traces\[0\]: trace_version 2"):
        load_report_traces(path)


def test_report_recording_and_bench_modules_are_headless():
    code = ("import sys, recall_tui.diagnostics.report, recall_tui.diagnostics.recording, recall_tui.diagnostics.engine_bench; "
            "bad = [m for m in ('textual', 'rich') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
