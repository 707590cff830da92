"""A tiny NLI task for the self-rationalizer F: x decides the label and each label has one rationale.

A hypothesis with "not" contradicts "X walks in a park", one with "maybe" is neutral, any other is entailed; the
rationale of a class is always the same sentence, so a trained F must reproduce it exactly.
"""

from __future__ import annotations

NLI = ["entailment", "neutral", "contradiction"]
SUBJECTS = ["a man", "a woman", "two kids", "a dog", "the crowd", "a girl", "an old man", "the team"]
RATIONALES = {"entailment": "walking in a park means being outside .",
              "neutral": "being outside does not tell the mood .",
              "contradiction": "one cannot walk in a park and not be outside ."}


def park_records(n: int) -> list[dict]:
    """``n`` schema records cycling through the three labels."""
    out = []
    for i in range(n):
        kind = NLI[i % 3]
        subject = SUBJECTS[(i // 3) % len(SUBJECTS)]
        hypothesis = {"entailment": f"{subject} is outside .", "neutral": f"{subject} is maybe happy .",
                      "contradiction": f"{subject} is not outside ."}[kind]
        out.append({"id": f"t{i}", "task": "nli", "premise": f"{subject} walks in a park .", "hypothesis": hypothesis,
                    "question": "", "choices": NLI, "label": kind, "rationale": RATIONALES[kind]})
    return out
