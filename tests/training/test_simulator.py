"""The LAS/RQ simulator (Hase et al., 2020; Wiegreffe et al., 2021): the sign of both metrics when it is trained on
rationales that restate the label, its inputs and label checks."""

from __future__ import annotations

import math

import pytest

from larev_hf.io import DataError
from larev_hf.modeling import build_model, build_tokenizer
from larev_hf.rora import tokenizer_texts
from larev_hf.training import TrainSettings
from larev_hf.training.simulator import simulatability, simulate, simulator_input, train_simulator
from tests.yesno_task import fact_and_leaky, yesno_records


@pytest.fixture(scope="module")
def simulator(tmp_path_factory):
    """A simulator trained on gold labels with rationales that state the fact *and* restate the label."""
    train = yesno_records("train", 200, leaky=True)
    tokenizer = build_tokenizer("t5-tiny", tokenizer_texts(train))
    settings = TrainSettings(learning_rate=1e-3, num_train_epochs=3, batch_size=16, progress=False)
    model = train_simulator(build_model("t5-tiny", tokenizer), tokenizer, train, tmp_path_factory.mktemp("sim") / "sim",
                            settings)
    return model.eval(), tokenizer


def test_rq_rewards_the_label_restatement_and_las_is_undefined_for_it(simulator):
    model, tokenizer = simulator
    test = yesno_records("test", 96)
    rationales = fact_and_leaky(test)
    scores = {name: simulatability(model, tokenizer, test, texts) for name, texts in rationales.items()}
    # The question alone says nothing (answers alternate yes / no): the x-only simulator is near chance.
    assert scores["gold"].accuracy["x"] < 0.7
    # "The answer is yes." makes every example simulatable, from the rationale alone too ...
    assert scores["leaky"].accuracy["x_r"] > 0.95 and scores["leaky"].accuracy["r"] > 0.95
    # ... so RQ rewards it above the fact-stating rationale (RoRA table 2: RQ 0.406 leaky vs 0.138 gold) ...
    assert scores["leaky"].rq > scores["gold"].rq + 0.3
    # ... and LAS calls every example leaking, leaving the non-leaking group empty: undefined (RoRA §4.1).
    assert scores["leaky"].las.n_nonleaking == 0 and math.isnan(scores["leaky"].las.las)
    assert scores["gold"].las.n_nonleaking > 0 and not math.isnan(scores["gold"].las.las)


def test_simulator_inputs_and_label_checks(simulator):
    model, tokenizer = simulator
    record = yesno_records("test", 1)[0]
    assert simulator_input(record, "r.", "x_r") == f"question: {record['question']} rationale: r."
    assert simulator_input(record, "r.", "x") == f"question: {record['question']} rationale:"
    assert simulator_input(record, "r.", "r") == "rationale: r."
    with pytest.raises(ValueError, match="unknown simulator view"):
        simulator_input(record, "r.", "rx")
    with pytest.raises(DataError, match=f"example id '{record['id']}'.*'maybe' is not one of its choices"):
        simulate(model, tokenizer, [record], ["r."], labels=["maybe"])
    # Simulating another label set (e.g. a task model's predictions) flips x_r correctness on the leaky rationale.
    leak = fact_and_leaky([record])["leaky"]
    flipped = "no" if record["label"] == "yes" else "yes"
    assert simulate(model, tokenizer, [record], leak)["x_r"][0] != simulate(model, tokenizer, [record], leak,
                                                                            labels=[flipped])["x_r"][0]
