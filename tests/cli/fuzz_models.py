"""The fuzz test's part for the verbs of retrieval depth (ask, eval locomo-qa, a search's
--cursor): plausible and garbage values of their arguments."""

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
    "llm_price_in": (st.sampled_from(["0", "0.15"]), st.sampled_from(["-1", "nan", "inf", "x"])),
    "llm_price_out": (st.sampled_from(["0", "0.6"]), st.sampled_from(["-1", "nan", "inf", "x"])),
    "cursor": (st.just("0123456789abcdef:10"), st.one_of(st.sampled_from(["x", ":", "a:-1", "a:1e3"]), NEAR)),
}
