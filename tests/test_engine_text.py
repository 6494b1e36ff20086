"""text: Porter stemming (the paper's examples), folding, analysis; config round trips."""

from __future__ import annotations

import pytest

from recall_tui.engine.config import Config
from recall_tui.engine.text import analyze, fold, jaccard, porter_stem, word_set

# Examples from Porter (1980), one per rule family.
PAIRS = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "cats": "cat", "feed": "feed",
    "agreed": "agre", "plastered": "plaster", "motoring": "motor", "sing": "sing",
    "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
    "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
    "filing": "file", "happy": "happi", "relational": "relat", "conditional": "condit",
    "rational": "ration", "valenci": "valenc", "digitizer": "digit", "hopeful": "hope",
    "goodness": "good", "revival": "reviv", "allowance": "allow", "adjustable": "adjust",
    "adoption": "adopt", "probate": "probat", "rate": "rate", "cease": "ceas",
    "controll": "control", "roll": "roll", "generalizations": "gener", "oscillators": "oscil",
}


@pytest.mark.parametrize("word,stem", sorted(PAIRS.items()))
def test_porter(word, stem):
    assert porter_stem(word) == stem


def test_fold_and_analyze():
    assert fold("Café Zürich Łódź straße") == "cafe zurich lodz strasse"
    assert analyze("The upgrades of Postgres, upgraded!") == ["upgrad", "postgr", "upgrad"]
    assert analyze("the of and") == []
    assert analyze("Maya's v2 k8s") == ["maya", "v2", "k8s"]


def test_jaccard():
    a, b = word_set("postgres upgrade plan"), word_set("the postgres upgrade")
    assert jaccard(a, b) == pytest.approx(2 / 3)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_config_round_trip_and_hash():
    c = Config().with_value("mmr.lam", 0.5).with_value("vector.skip_types", ["task"])
    assert Config.from_toml(c.to_toml()) == c
    assert c.hash() != Config().hash() and len(c.hash()) == 64
    assert c.get("mmr.lam") == 0.5 and c.vector.skip_types == ("task",)
    c2 = c.with_value("boosts.staleness.windows", {"task": [1, 2, 3]})
    assert c2.boosts.staleness.windows["task"] == [1, 2, 3]
    assert c2.boosts.staleness.windows["lesson"] == [365, 1095, 3650]
    with pytest.raises(ValueError, match="mmr.lamda: unknown setting"):
        c.with_value("mmr.lamda", 1.0)
    with pytest.raises(ValueError, match="expected float"):
        c.with_value("mmr.lam", "high")
    with pytest.raises(ValueError, match="not valid TOML"):
        Config.from_toml("k = = 3", source="x.toml")
