"""Print a sweep JSON written by ``larev_sweep.py`` as a markdown table (for docs/method.md).

    python benchmarks/sweep_table.py benchmarks/results/larev_sweep_esnli.json
"""

from __future__ import annotations

import json
import sys


def render(path: str) -> str:
    data = json.load(open(path, encoding="utf-8"))
    settings = data["settings"]
    lines = [
        f"{settings['dataset']}: train {settings['max_train_examples'] or 'all'}, test {settings['max_eval_examples'] or 'all'}, "
        f"backbone {settings['backbone']}, seed {settings['seed']}.",
        "",
        "| Model | λ_IRM | λ_probe | other | Gold − Leaky | Gold − Gold-Leaky | Gold − Vacuous | SUM [95% CI] |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, point in data["points"].items():
        seps, ci = point["separations"], point["ci95"]["sum"]
        other = ", ".join(f"{k} {point[k]}" for k in ("token_reduction", "probe_max_loss") if point.get(k) is not None)
        label = "Φ (REV)" if name == "rev" else "Φ_LA"
        lines.append(
            f"| {label} | {point.get('lambda_irm', 'n/a')} | {point.get('lambda_probe', 'n/a')} | {other} | "
            f"{seps['gold_minus_leaky']:+.3f} | {seps['gold_minus_gold_leaky']:+.3f} | {seps['gold_minus_vacuous']:+.3f} | "
            f"{seps['sum']:+.3f} [{ci[0]:.2f}, {ci[1]:.2f}] |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n\n".join(render(path) for path in sys.argv[1:]))
