"""LoCoMo dialog-level evidence recall@k through the real Memory tool.

Each conversation's turns are written as notes into one user scope of a memory home (so each
conversation is its own haystack, kept apart by the same scope rules every read obeys), the
index is built with the embedder under test, and every question is asked through
``MemoryTool.recall`` with the recipe under test. recall@k is the share of a question's evidence
turns among the top k (Maharana et al., ACL 2024, Table 3).
"""

from __future__ import annotations

import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from corpora.locomo import CATEGORIES, LICENCE, Conversation, Turn
from memory_core import Identity, Memory
from memory_core.adapters.embedders import make_embedder
from memory_core.retrieval.calibration import ranked_features
from memory_core.retrieval.recipes import DEFAULT_RECIPE
from memory_core.write.conversation import CONTEXT_TURNS

from .figures import saved_plot
from .locomo_ablation import full_ranking
from .locomo_tuned import CROSS_FIT_TUNING, CROSS_FITTED, CrossFitTuning, split_halves, training_pairs, tuned_model
from .metrics import bootstrap_ci, mcnemar_exact, recall_at_k

KS = (5, 10, 25, 50)
TENANT = "locomo"
# The paper's dialog-level figures with its DRAGON retriever (ACL 2024), overall.
DRAGON = {5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7}
Progress = Callable[[str], None]


# How the turns are written and the questions asked.
TUNED = "tuned"  # the harness's way: context, observed_at and participants passed explicitly
DOCUMENTED = "documented"  # what docs/retrieval.md tells a user to do, and recall's defaults
PATHS = (TUNED, DOCUMENTED)


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One configuration to measure: an embedder, a recipe (None: recall's default) and the path
    the turns are written and asked through."""

    name: str
    embedder: str
    recipe: str | None
    path: str = TUNED
    ablate: bool = False  # read each question's whole ranking, for the report's ablation rows

    @property
    def recipe_label(self) -> str:
        return self.recipe or f"default: {DEFAULT_RECIPE}"


DEFAULT_SPECS = (
    RunSpec("bm25_only", "hashing", "bm25_only"),
    RunSpec("static", "static", "vector_only"),
    RunSpec("minilm", "minilm", "vector_only"),
    RunSpec("hybrid(static)", "static", "hybrid_rrf"),
    RunSpec("hybrid(minilm)", "minilm", "hybrid_rrf"),
    RunSpec("best(static)", "static", "hybrid_zscore"),
    RunSpec("best(minilm)", "minilm", "hybrid_zscore"),
    RunSpec("default(static)", "static", None, DOCUMENTED, ablate=True),
    RunSpec("default(minilm)", "minilm", None, DOCUMENTED, ablate=True),
    # MiniLM tuned on LoCoMo, each half asked of the model tuned on the other (evals.locomo_tuned)
    RunSpec("default(minilm-tuned)", CROSS_FITTED, None, DOCUMENTED, ablate=True),
    # the default before the session prior, through the same documented path
    RunSpec("previous(static)", "static", "hybrid_zscore", DOCUMENTED),
    RunSpec("previous(minilm)", "minilm", "hybrid_zscore", DOCUMENTED),
)


# The tuned path gives each turn as much context as the store gives a run session's notes by itself.


def turn_key(turn: Turn) -> str:
    return turn.dia_id


def turn_text(turn: Turn) -> str:
    """What a turn note says: the words, and a shared photo's caption."""
    return f"{turn.text} {turn.caption}" if turn.caption else turn.text


def turn_context(turns: Sequence[Turn], i: int, before: int = CONTEXT_TURNS) -> str | None:
    """The turns just before turn ``i`` in its session: words that help find it, not its value."""
    earlier = [turn_text(t) for t in turns[max(0, i - before) : i] if t.session == turns[i].session]
    return " ".join(earlier) or None


def write_conversations(memory: Memory, conversations: Sequence[Conversation], progress: Progress | None = None) -> int:
    written = 0
    for conv in conversations:
        tool = memory.for_run(
            Identity(tenant=TENANT, user=conv.sample_id, agent="locomo-loader"), origin="evals.locomo"
        )
        for i, turn in enumerate(conv.turns):
            when = turn.session_date
            tool.set(
                turn_key(turn),
                turn_text(turn),
                kind="note",
                memory_type="dialog_turn",
                valid_at=when,
                observed_at=when,
                subject=turn.speaker,
                context=turn_context(conv.turns, i),
            )
            written += 1
        if progress:
            progress(f"wrote {conv.sample_id}: {len(conv.turns)} turns")
    return written


def write_documented(memory: Memory, conversations: Sequence[Conversation], progress: Progress | None = None) -> int:
    """The documented path: an agent writes each turn as it happens, as a note in its run session
    (one per LoCoMo session), with the speaker as subject and the session's date as valid_at. The
    store gives each turn its context (docs/retrieval.md, "Conversations")."""
    written = 0
    for conv in conversations:
        for turn in conv.turns:
            identity = Identity(
                tenant=TENANT, user=conv.sample_id, agent="locomo-agent", session=f"{conv.sample_id}/{turn.session}"
            )
            tool = memory.for_run(identity, origin="evals.locomo")
            tool.set(turn_key(turn), turn_text(turn), kind="note", subject=turn.speaker, valid_at=turn.session_date)
            written += 1
        if progress:
            progress(f"wrote {conv.sample_id}: {len(conv.turns)} turns (documented path)")
    return written


WRITERS = {TUNED: write_conversations, DOCUMENTED: write_documented}


@dataclass
class SpecResult:
    spec: RunSpec
    per_question: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    embedder_name: str = ""  # the embedder's own name (what a calibration is keyed by)

    def recall(self, k: int, category: int | None = None) -> float:
        rows = [q for q in self.per_question if category is None or q["category"] == category]
        return 100.0 * sum(q[f"r@{k}"] for q in rows) / len(rows) if rows else float("nan")

    def recall_on(self, k: int, samples: set[str]) -> float:
        rows = [q for q in self.per_question if q["sample_id"] in samples]
        return 100.0 * sum(q[f"r@{k}"] for q in rows) / len(rows) if rows else float("nan")

    def hits(self, k: int) -> list[bool]:
        """Per question: is all of its evidence in the top k? (The paired outcome McNemar compares.)"""
        return [q[f"r@{k}"] == 1.0 for q in self.per_question]

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.spec.name,
            "embedder": self.spec.embedder,
            "recipe": self.spec.recipe_label,
            "path": self.spec.path,
            "questions": len(self.per_question),
            "seconds": round(self.seconds, 1),
        }
        tune, held = halves(self.per_question)
        for k in (5, 10):
            out[f"r@{k}_tune_half"] = round(self.recall_on(k, tune), 2)
            out[f"r@{k}_held_half"] = round(self.recall_on(k, held), 2)
        for k in KS:
            out[f"r@{k}"] = round(self.recall(k), 2)
            low, high = bootstrap_ci([q[f"r@{k}"] for q in self.per_question])
            out[f"r@{k}_ci95"] = [round(100 * low, 2), round(100 * high, 2)]
        for cat in CATEGORIES:
            out[f"r@10_cat{cat}"] = round(self.recall(10, cat), 2)
        return out


def evaluate_spec(memory: Memory, conversations: Sequence[Conversation], spec: RunSpec) -> SpecResult:
    result = SpecResult(spec)
    started = time.perf_counter()
    k_max = max(KS)
    for conv in conversations:
        tool = memory.for_run(Identity(tenant=TENANT, user=conv.sample_id))
        for q in conv.questions:
            if not q.evidence:
                continue
            if spec.path == DOCUMENTED and spec.recipe is None:
                found = tool.recall(q.question, k=k_max)
            elif spec.path == DOCUMENTED:
                found = tool.recall(q.question, k=k_max, recipe=spec.recipe)
            else:
                found = tool.recall(q.question, k=k_max, recipe=spec.recipe, participants=conv.speakers)
            ranked = [h.key for h in found.hits]
            wanted = set(q.evidence)
            row = {
                "sample_id": conv.sample_id,
                "category": q.category,
                "question": q.question,
                "evidence": list(q.evidence),
                "top": ranked[:10],
                # each top-10 hit's calibration features, and whether it is evidence (the label)
                "scored": [[*f, float(h.key in wanted)] for h, f in zip(found.hits[:10], ranked_features(found.hits))],
            }
            row.update({f"r@{k}": recall_at_k(ranked, q.evidence, k) for k in KS})
            if spec.ablate:  # kept in memory for the ablation rows, not written per question
                row["ranking"] = full_ranking(tool, q.question, found, spec.recipe)
            result.per_question.append(row)
    result.seconds = time.perf_counter() - started
    return result


def seeded_ids(seed: int = 0) -> Callable[[], str]:
    """Ids shaped as Memory makes them (128 random bits in hex) but drawn from a seeded generator.
    Rows of equal score are ranked by fact id, so with fresh random ids the same code scored
    differently from one run to the next (docs/benchmarks.md, "LoCoMo runs repeat"); with these,
    a run repeats."""
    rng = random.Random(seed)
    return lambda: f"{rng.getrandbits(128):032x}"


def run_locomo(
    conversations: Sequence[Conversation],
    specs: Sequence[RunSpec],
    work_dir: Path,
    models_dir: Path,
    progress: Progress | None = None,
    tuning: CrossFitTuning = CROSS_FIT_TUNING,
) -> list[SpecResult]:
    """Write the turns once per path, then per embedder copy the store, build its index, run its
    recipes. Results come in the order of ``specs``."""
    say = progress or (lambda message: None)
    by_spec: dict[RunSpec, SpecResult] = {}
    for path in dict.fromkeys(s.path for s in specs):
        base = work_dir / f"store-{path}"
        if base.exists():
            shutil.rmtree(base)
        with Memory.open(base, new_id=seeded_ids()) as memory:
            started = time.perf_counter()
            count = WRITERS[path](memory, conversations, say)
            say(f"wrote {count} turns ({path}) in {time.perf_counter() - started:.1f}s")
        for embedder_name in dict.fromkeys(s.embedder for s in specs if s.path == path):
            path_specs = [s for s in specs if s.embedder == embedder_name and s.path == path]
            parts: dict[RunSpec, list[SpecResult]] = {s: [] for s in path_specs}
            index_parts = _index_parts(embedder_name, conversations, models_dir, say, tuning)
            for n, (asked, embedder) in enumerate(index_parts):
                home = work_dir / (f"home-{path}-{embedder_name}" + (f"-{n + 1}" if len(index_parts) > 1 else ""))
                if home.exists():
                    shutil.rmtree(home)
                home.mkdir(parents=True)
                shutil.copy(base / "memory.duckdb", home / "memory.duckdb")
                shutil.copytree(base / "keys", home / "keys")  # the store's audit chain is signed with them
                with Memory.open(home, embedder=embedder) as memory:
                    started = time.perf_counter()
                    memory.reindex()
                    say(f"indexed with {embedder.name} in {time.perf_counter() - started:.1f}s")
                    for spec in path_specs:
                        parts[spec].append(evaluate_spec(memory, asked, spec))
                        parts[spec][-1].embedder_name = embedder.name
            for spec, results in parts.items():
                result = by_spec[spec] = _joined(spec, results)
                say(f"{spec.name}: r@10 {result.recall(10):.1f}  ({result.seconds:.0f}s)")
    return [by_spec[s] for s in specs]


def _index_parts(
    embedder_name: str,
    conversations: Sequence[Conversation],
    models_dir: Path,
    say: Progress,
    tuning: CrossFitTuning = CROSS_FIT_TUNING,
) -> list[tuple[Sequence[Conversation], Any]]:
    """Which conversations are asked of which embedder's index: all of them of one, or for the
    cross-fitted tuned MiniLM each half of the model tuned on the other half."""
    if embedder_name != CROSS_FITTED:
        return [(conversations, make_embedder(embedder_name, cache_dir=models_dir))]
    first, second = split_halves(conversations)
    parts = []
    base = make_embedder("minilm") if tuning.hard_negatives else None
    for asked, trained_on in ((first, second), (second, first)):
        pairs = training_pairs(trained_on, turn_text, tuning, base)
        model = tuned_model(pairs, models_dir, tuning.settings, progress=say)
        parts.append((asked, make_embedder("minilm", model_path=model)))
    return parts


def _joined(spec: RunSpec, results: Sequence[SpecResult]) -> SpecResult:
    """One run's result from its parts, its questions in the conversations' order."""
    if len(results) == 1:
        return results[0]
    joined = SpecResult(spec, seconds=sum(r.seconds for r in results))
    joined.per_question = [q for r in results for q in r.per_question]
    joined.embedder_name = " / ".join(r.embedder_name for r in results)
    return joined


def halves(per_question: Sequence[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """The conversations in two halves, in the file's order: choices were made on the first
    (``tune``), the second is held out from them (docs/retrieval.md, "The default recipe")."""
    samples = list(dict.fromkeys(q["sample_id"] for q in per_question))
    cut = (len(samples) + 1) // 2
    return set(samples[:cut]), set(samples[cut:])


def paired_tests(results: Sequence[SpecResult], k: int = 10) -> list[dict[str, Any]]:
    """McNemar's exact test between every pair of runs on per-question hits@k."""
    out = []
    for i, a in enumerate(results):
        for b in results[i + 1 :]:
            test = mcnemar_exact(a.hits(k), b.hits(k))
            out.append(
                {
                    "a": a.spec.name,
                    "b": b.spec.name,
                    f"hits@{k}_a": sum(a.hits(k)),
                    f"hits@{k}_b": sum(b.hits(k)),
                    **test,
                }
            )
    return out


def report_markdown(
    results: Sequence[SpecResult], data_file: Path, cleaning: dict[str, Any], plot_file: str | None = None
) -> str:
    lines = [
        "# LoCoMo dialog-level evidence recall@k",
        "",
        f"Data: `{data_file}` — {LICENCE}.  ",
        "Metric: share of a question's evidence turns among the top k retrieved turns; each conversation "
        "is its own haystack (one user scope); questions with no usable evidence are skipped.  ",
        f"Evidence cleaning: {cleaning}",
        "",
        "Paths. *tuned*: every turn is written through the Memory tool as a note — value: its words (and a "
        "shared photo's caption); subject: its speaker; valid_at and observed_at: its session's date; index "
        f"context (found by BM25, not part of the value): the {CONTEXT_TURNS} turns before it in its session — "
        "and each question is asked through `recall` with the run's recipe and the two speakers as "
        "participants. *documented*: what docs/retrieval.md tells a user to do — each turn is a `set(key, "
        "text, kind='note', subject=speaker, valid_at=session date)` in a run session per LoCoMo session (the "
        "store adds the context), and each question is `recall(question, k=50)` with every other argument "
        "left at its default. No LLM, no annotation (observations, summaries, answers) is used.",
        "",
        "| retriever | path | R@5 | R@10 | R@25 | R@50 | R@10 tune half | R@10 held half | "
        + " | ".join(f"R@10 {v}" for v in CATEGORIES.values())
        + " |",
        "|---|---|---|---|---|---|---|---|" + "---|" * len(CATEGORIES),
        "| DRAGON (paper, ACL 2024) | — | "
        + " | ".join(f"{DRAGON[k]:.1f}" for k in KS)
        + " | — | — |"
        + " — |" * len(CATEGORIES),
    ]
    for r in results:
        s = r.summary()
        lines.append(
            f"| {s['name']} (`{s['embedder']}`, `{s['recipe']}`) | {s['path']} | "
            + " | ".join(f"{s[f'r@{k}']:.1f}" for k in KS)
            + f" | {s['r@10_tune_half']:.1f} | {s['r@10_held_half']:.1f} | "
            + " | ".join(f"{s[f'r@10_cat{c}']:.1f}" for c in CATEGORIES)
            + " |"
        )
    lines += [
        "",
        "95% bootstrap intervals (R@10): " + "; ".join(f"{r.spec.name} {r.summary()['r@10_ci95']}" for r in results),
    ]
    if len(results) > 1:
        lines += [
            "",
            "## Paired comparisons",
            "",
            "McNemar's exact test on per-question hits@10 (a question is a hit when all of its evidence is in "
            "the top 10): *only a* / *only b* count the questions one run hits and the other misses; p is the "
            "two-sided binomial probability of a split at least as uneven under no difference.",
            "",
            "| a | b | hits a | hits b | only a | only b | p |",
            "|---|---|---|---|---|---|---|",
        ]
        for t in paired_tests(results):
            lines.append(
                f"| {t['a']} | {t['b']} | {t['hits@10_a']} | {t['hits@10_b']} | {t['only_a']} | {t['only_b']} | "
                f"{t['p_value']:.3g} |"
            )
    if plot_file:
        lines += ["", f"![recall@k]({plot_file})"]
    return "\n".join(lines) + "\n"


def plot_recall(results: Sequence[SpecResult], path: Path) -> None:
    labels = {"xlabel": "k (turns retrieved)", "ylabel": "evidence recall@k (%)"}
    with saved_plot(path, (7, 4.5), title="LoCoMo dialog-level recall@k", **labels) as ax:
        ax.plot(KS, [DRAGON[k] for k in KS], "k--", marker="o", label="DRAGON (paper)")
        for r in results:
            ax.plot(KS, [r.recall(k) for k in KS], marker="o", label=r.spec.name)
        ax.set_xscale("log")
        ax.set_xticks(KS, [str(k) for k in KS])
