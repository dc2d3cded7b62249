"""Ablation rows for the LoCoMo report: what each leg and prior of the default recipe adds.

A run that ablates reads, per question, the whole fused ranking through the documented paging API
(the first page as every run asks it, then ``next_cursor`` until the ranking is spent), each hit
with the terms its score is the sum of. Removing one term and re-sorting that ranking gives
exactly the ranking the recipe would give without it for every prior added after the legs'
z-scores — with one approximation, stated in the report: the session prior is computed from the
score that the date and participant priors are part of, so removing those two re-sorts with the
session prior as it was. The key-match and graph legs are rows too: their raw scores are terms
like the priors', and a candidate that only such a leg brought stays in the re-sorted ranking with
its other terms (without the leg it would not be a candidate at all; it ranks no higher for that).
"""

from __future__ import annotations

from typing import Any, Sequence

from .metrics import mcnemar_exact, recall_at_k

# The legs and priors an ablation row removes, in the order the report lists them.
ABLATED_TERMS = (
    "key",
    "graph",
    "session_prior",
    "date_prior",
    "subject_prior",
    "confidence_prior",
    "reinforcement_prior",
    "source_prior",
    "recency_prior",
)
PAGE = 200


def full_ranking(
    tool: Any, question: str, first: Any, recipe: str | None = None
) -> list[tuple[str, float, dict[str, float]]]:
    """(key, score, terms) of every fused candidate of the search whose first page is ``first``
    (asked with ``recipe``, None: the default), in ranking order, read page by page."""
    ranking = [(h.key, h.score, dict(h.terms)) for h in first.hits]
    cursor = first.next_cursor
    named = {} if recipe is None else {"recipe": recipe}
    while cursor is not None:
        page = tool.recall(question, k=PAGE, cursor=cursor, **named)
        ranking += [(h.key, h.score, dict(h.terms)) for h in page.hits]
        cursor = page.next_cursor
    return ranking


def without(ranking: Sequence[tuple[str, float, dict[str, float]]], term: str | None) -> list[str]:
    """The keys re-sorted by score less ``term`` (ties keep the ranking's own order)."""
    if term is None:
        return [key for key, _, _ in ranking]
    order = sorted(range(len(ranking)), key=lambda n: (-(ranking[n][1] - ranking[n][2].get(term, 0.0)), n))
    return [ranking[n][0] for n in order]


def ablation_rows(per_question: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per removed term: R@5, R@10, how many questions it touched (any candidate with the term
    non-zero) and McNemar's exact test on hits@10 against the full ranking."""
    rows = [q for q in per_question if "ranking" in q]
    if not rows:
        return []

    def measure(term: str | None) -> dict[str, Any]:
        ranked = [without(q["ranking"], term) for q in rows]
        r5 = [recall_at_k(r, q["evidence"], 5) for r, q in zip(ranked, rows)]
        r10 = [recall_at_k(r, q["evidence"], 10) for r, q in zip(ranked, rows)]
        touched = sum(1 for q in rows if term and any(t.get(term) for _, _, t in q["ranking"]))
        return {"term": term, "r@5": 100 * sum(r5) / len(rows), "r@10": 100 * sum(r10) / len(rows),
                "hits@10": [v == 1.0 for v in r10], "touched": touched}  # fmt: skip

    full = measure(None)
    out = [{"removed": "nothing (the recipe as it runs)", **_public(full), "touched": len(rows), "p_value": 1.0}]
    for term in ABLATED_TERMS:
        row = measure(term)
        test = mcnemar_exact(full["hits@10"], row["hits@10"])
        out.append({"removed": term, **_public(row), "only_full": test["only_a"], "only_without": test["only_b"],
                    "p_value": test["p_value"]})  # fmt: skip
    return out


def _public(measured: dict[str, Any]) -> dict[str, Any]:
    return {"r@5": round(measured["r@5"], 2), "r@10": round(measured["r@10"], 2), "touched": measured["touched"]}


def ablation_markdown(results: Sequence[Any]) -> list[str]:
    """The report's ablation section, one table per run that ablated."""
    lines: list[str] = []
    for result in results:
        rows = ablation_rows(result.per_question)
        if not rows:
            continue
        if not lines:
            lines += [
                "",
                "## Ablation: what each leg and prior of the default recipe adds",
                "",
                "Each row re-sorts every question's whole fused ranking (read through `next_cursor`) with one "
                "leg's or prior's term taken out of every candidate's score (the key-match and graph legs add "
                "raw scores, so they are terms too). *questions touched*: questions where some "
                "candidate had the term non-zero. McNemar's exact test on hits@10 against the recipe as it runs. "
                "Exact for every prior but two: the session prior is computed from a score the date and "
                "participant priors are part of, so their rows keep the session prior as it was.",
            ]
        full = rows[0]
        lines += [
            "",
            f"**{result.spec.name}** (`{result.spec.recipe_label}`, {result.spec.path} path)",
            "",
            "| removed | R@5 | R@10 | Δ R@10 | questions touched | only with it | only without it | p |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in rows:
            delta = row["r@10"] - full["r@10"]
            lines.append(
                f"| {row['removed']} | {row['r@5']:.1f} | {row['r@10']:.1f} | {delta:+.1f} | {row['touched']} | "
                f"{row.get('only_full', '—')} | {row.get('only_without', '—')} | {row['p_value']:.3g} |"
            )
    return lines
