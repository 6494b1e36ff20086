"""Write recall_tui/data/probe-vectors.json: the local embedder's vector of every off-topic
probe of the calibrated floor (`recall_tui.engine.calibration.PROBES`).

The floor embeds 24 probes before the first recall of a process; with these shipped, a
one-shot `recall-tui query`, an MCP server's first recall and a cold hook skip 23 model runs.
Each vector is made exactly as a query's is (one text per run, no padding), so a recall uses
the same numbers whether it reads this file or embeds the probes itself. Run it again when
PROBES or the local model changes (tests/test_probe_vectors.py fails until then):

    .venv/bin/python scripts/make_probe_vectors.py
"""

from __future__ import annotations

import json
from pathlib import Path

from recall_tui.engine.calibration import PROBES, probes_digest
from recall_tui.engine.probe_vectors import encode_vector
from recall_tui.index.embed import LOCAL_MODEL, LocalEmbedder

OUT = Path(__file__).resolve().parent.parent / "recall_tui" / "data" / "probe-vectors.json"


def main() -> None:
    emb = LocalEmbedder()
    vectors = [encode_vector(emb.embed([text])[0]) for text in PROBES]
    OUT.write_text(json.dumps({
        "about": "the local embedder's vector of each calibrated-floor probe "
                 "(scripts/make_probe_vectors.py)",
        "model": LOCAL_MODEL, "probes_sha256": probes_digest(), "dtype": "float32",
        "vectors": vectors,
    }, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(vectors)} vectors to {OUT.name}")


if __name__ == "__main__":
    main()
