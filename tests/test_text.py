from openclaw_alaya.text import (
    STOPWORDS,
    content_words,
    estimate_tokens,
    stem,
    tokenize,
)


def test_latin_words_lowercased_and_stemmed():
    assert tokenize("Running GROUPS studies, painted!") == ["run", "group", "study", "paint"]
    assert tokenize("LGBTQ+ in 2023") == ["lgbtq", "in", "2023"]


def test_stem_is_conservative():
    assert stem("class") == "class"
    assert stem("bus") == "bus"
    assert stem("is") == "is"
    assert stem("planned") == "plan"
    assert stem("2023s") == "2023s"


def test_cjk_unigrams_and_bigrams():
    toks = tokenize("图数据库")
    assert toks == ["图", "数", "据", "库", "图数", "数据", "据库"]
    assert tokenize("记") == ["记"]


def test_cjk_query_matches_sentence_via_bigrams():
    query = set(content_words("数据库"))
    doc = set(content_words("我们使用嵌入式图数据库来存储代理记忆"))
    assert {"数据", "据库"} <= query & doc
    other = set(content_words("今天天气很好"))
    assert not (query & other)


def test_mixed_script():
    toks = tokenize("用 LanceDB 做搜索")
    assert "lancedb" in toks and "搜索" in toks


def test_stopwords_and_content_words():
    assert {"the", "when", "what", "的", "了"} <= STOPWORDS
    # months and numbers are content (dates are answers)
    assert "may" not in STOPWORDS and "march" not in STOPWORDS
    assert content_words("When did Caroline go to the LGBTQ support group?") == [
        "caroline", "go", "lgbtq", "support", "group",
    ]
    assert tokenize("the cat", drop_stopwords=True) == ["cat"]


def test_empty_text():
    assert tokenize("") == []
    assert content_words("") == []
    assert estimate_tokens("") == 0
    assert tokenize("?!  ...") == []


def test_estimate_tokens():
    assert estimate_tokens("abcd" * 25) == 25
    assert estimate_tokens("数据库") == 3
    assert estimate_tokens("hello 数据库") == 3 + 2  # 6 latin chars -> 2, 3 CJK -> 3
