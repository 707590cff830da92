"""A tiny yes/no task where the rationale's fact decides the label only together with the question.

"Is the blorvex kept in the kitchen?" with the rationale "A blorvex is a kind of spice." (spices are
kept in the kitchen, tools in the garage): the answer is yes exactly when the asked place is the
category's place. The questions alternate yes / no, so neither the question alone nor the rationale
alone predicts the label (RoRA's leakage detector, which looks at the rationale alone, finds nothing
in the fact), while "The answer is yes." restates the label. Items come from the synthetic task, so
test items never occur in training.
"""

from __future__ import annotations

from larev_hf.data import LEAKY_TEMPLATE, make_example, make_synthetic_split, synthetic_ground_truth

CATEGORIES = ("spice", "tool")  # spice → kitchen, tool → garage (larev_hf.data.SYNTHETIC_CATEGORIES)
PLACES = ("kitchen", "garage")


def yesno_records(split: str, n: int, seed: int = 0, leaky: bool = False) -> list[dict]:
    """``n`` schema records (task ``yesno``); ``leaky`` appends "The answer is <label>." to the fact."""
    records = []
    for example in make_synthetic_split(split, 8 * n, seed=seed):
        truth = synthetic_ground_truth(example)
        if truth["category"] not in CATEGORIES:
            continue
        label = "yes" if len(records) % 2 == 0 else "no"
        asked = truth["place"] if label == "yes" else next(p for p in PLACES if p != truth["place"])
        rationale = truth["fact_rationale"] + (" " + LEAKY_TEMPLATE.format(label=label) if leaky else "")
        records.append(make_example(id=example["id"], task="yesno", question=f"Is the {truth['item']} kept in the {asked}?",
                                    choices=["yes", "no"], label=label, rationale=rationale))
        if len(records) == n:
            return records
    raise ValueError(f"the synthetic {split!r} split has fewer than {n} examples of {CATEGORIES}")


def fact_and_leaky(records: list[dict]) -> dict[str, list[str]]:
    """The fact-only, label-only and fact + label rationales of ``records`` (whatever their current rationale)."""
    facts = [r["rationale"].split(". The answer is")[0].rstrip(".") + "." for r in records]
    leaks = [LEAKY_TEMPLATE.format(label=r["label"]) for r in records]
    return {"gold": facts, "leaky": leaks, "gold_leaky": [f"{f} {leak}" for f, leak in zip(facts, leaks, strict=True)]}
