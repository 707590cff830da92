"""NLI records whose label only the explanation tells: what the explanation-reading NLI judge is trained and
checked on."""

from __future__ import annotations

#: What an explanation says per label, for :func:`explained_records`: the pair itself never tells the label.
EXPLANATION_OF = {"entailment": "so they are one and the same thing", "contradiction": "nobody can do both at once",
                  "neutral": "nothing says whether that is true"}


def explained_records(n: int, prefix: str, swap: bool = False) -> list[dict]:
    """NLI records whose premise and hypothesis are one sentence for every label, so only the explanation tells the
    label (:data:`EXPLANATION_OF`); ``swap`` gives each the explanation of the next label instead."""
    from larev_hf.data import make_example

    labels = ("entailment", "contradiction", "neutral")
    people = ["man", "woman", "boy", "girl", "chef", "dog", "child", "farmer", "doctor", "singer"]
    out = []
    for i in range(n):
        label, who = labels[i % 3], people[i % len(people)]
        said = labels[(i + 1) % 3] if swap else label
        out.append(make_example(id=f"{prefix}-{i}", task="nli", premise=f"A {who} is outside .",
                                hypothesis=f"A {who} is walking .", choices=["entailment", "neutral", "contradiction"],
                                label=label, rationale=f"A {who} walking, {EXPLANATION_OF[said]} ."))
    return out
