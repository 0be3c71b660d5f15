"""JiebaTokenizer: the tokens the keyword index and the sparse encoder both rely on."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given
from hypothesis import strategies as st

from ragline.adapters.tokenizer.jieba import JiebaTokenizer

tokenizer = JiebaTokenizer()


def test_chinese_is_segmented_into_words_and_search_subwords() -> None:
    tokens = tokenizer.tokenize("我们在北京大学学习")
    assert "北京大学" in tokens
    assert "北京" in tokens
    assert "学习" in tokens
    assert "在" in tokens  # no stopword removal


def test_precise_mode_keeps_only_the_longest_words() -> None:
    tokens = JiebaTokenizer(search_mode=False).tokenize("我们在北京大学学习")
    assert tokens == ["我们", "在", "北京大学", "学习"]


def test_words_are_casefolded_and_punctuation_dropped() -> None:
    assert tokenizer.tokenize("Hello, WORLD! Straße?") == ["hello", "world", "strasse"]


def test_inner_apostrophes_and_periods_join_words() -> None:
    tokens = tokenizer.tokenize("Don’t use 3.14 e.g. here.")
    assert tokens == ["don't", "use", "3.14", "e.g", "here"]


def test_full_width_forms_are_normalised() -> None:
    assert tokenizer.tokenize("ＡＢＣ１２３") == ["abc123"]


def test_mixed_scripts_keep_text_order() -> None:
    tokens = tokenizer.tokenize("用Python处理自然语言 and 한국어 text")
    assert tokens.index("python") < tokens.index("处理") < tokens.index("and")
    assert "한국어" in tokens
    assert tokens[-1] == "text"


def test_blank_text_gives_no_tokens() -> None:
    assert tokenizer.tokenize("") == []
    assert tokenizer.tokenize("  \n\t ,.;!?。，") == []


@given(st.text(max_size=200))
def test_tokens_are_deterministic_non_blank_and_space_free(text: str) -> None:
    tokens = tokenizer.tokenize(text)
    assert tokens == tokenizer.tokenize(text)
    for token in tokens:
        assert token
        assert not any(ch.isspace() for ch in token)


@given(st.lists(st.sampled_from(["alpha", "Beta", "数据", "检索", "x1"]), max_size=20))
def test_space_joined_words_tokenize_back_to_themselves(words: list[str]) -> None:
    tokens = JiebaTokenizer(search_mode=False).tokenize(" ".join(words))
    assert tokens == [w.casefold() for w in words]


def test_combining_marks_stay_inside_their_word() -> None:
    decomposed = unicodedata.normalize("NFD", "naïve café")
    assert tokenizer.tokenize(decomposed) == ["naïve", "café"]
    assert tokenizer.tokenize("हिन्दी भाषा।") == ["हिन्दी", "भाषा"]


def test_symbols_and_variation_selectors_are_not_tokens() -> None:
    assert tokenizer.tokenize("❤️ ㈱ → ✓") == []


def test_compatibility_forms_are_folded() -> None:
    assert tokenizer.tokenize("ﬁne ３．１４ Ｄｏｎ＇ｔ") == ["fine", "3.14", "don't"]


def test_one_tokenizer_serves_worker_threads() -> None:
    # The pipeline tokenizes in asyncio.to_thread workers, not in the creating thread.
    texts = ["北京大学 a", "自然语言处理", "Mixed 中文 text"] * 4
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(tokenizer.tokenize, texts)) == [tokenizer.tokenize(t) for t in texts]


def test_the_dictionary_is_loaded_by_the_first_han_text_not_at_start_up() -> None:
    """A process that only ever sees other scripts (an English `ragline search`) never pays
    for rjieba's import and dictionary (~0.3 s); the first Han text loads them."""
    probe = (
        "import sys\n"
        "from ragline.adapters.tokenizer.jieba import JiebaTokenizer\n"
        "t = JiebaTokenizer()\n"
        "assert t.tokenize('Straße e.g. café') == ['strasse', 'e.g', 'café']\n"
        "print('rjieba' in sys.modules)\n"
        "assert '北京大学' in t.tokenize('我们在北京大学学习')\n"
        "print('rjieba' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True"]
