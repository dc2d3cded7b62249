"""The fuzz test's part for the verbs that call a language model (ask, eval locomo-qa): plausible
and garbage values of their arguments."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.cli.fuzz_service import NEAR

# Nothing listens on port 9: an ask that reaches the model is LLM_UNAVAILABLE after its retries.
NOWHERE = "http://127.0.0.1:9/v1"

MODEL_VALUES: dict[str, tuple[st.SearchStrategy, st.SearchStrategy]] = {
    "question": (st.sampled_from(["where does ana live", "what is k1"]), NEAR),
    "llm": (st.just(NOWHERE), st.one_of(st.just("ftp://x"), NEAR)),
    "llm_model": (st.just("gpt-4o-mini"), NEAR),
    "judge": (st.just(NOWHERE), st.one_of(st.just("ftp://x"), NEAR)),
    "judge_model": (st.just("gpt-4o-mini"), NEAR),
    "questions": (st.just("2"), st.sampled_from(["0", "-1", "x"])),
}
