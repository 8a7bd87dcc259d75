"""Cue phrase tables for the heuristic distiller, in one place.

To extend: add a phrase to the right list. English phrases match on word boundaries and
case-insensitively (``'`` also matches ``’``); Chinese phrases match as substrings. Strong cues
count 2, weak cues 1; the type with the highest score wins, ties go to the earlier type in
`TYPE_PRIORITY`.
"""

from __future__ import annotations

import re

TYPE_PRIORITY = ["gotcha", "decision", "preference", "pattern", "fact", "concept"]

TYPE_CUES: dict[str, dict[str, list[str]]] = {
    "gotcha": {
        "strong": [
            "watch out", "be careful", "careful", "gotcha", "pitfall", "make sure", "root cause",
            "fails", "failed", "failing", "failure", "error", "errors", "bug", "crash", "crashed",
            "crashes", "broke", "broken", "exception", "traceback", "timed out", "timeout",
            "outage", "regression", "deadlock", "oom", "out of memory", "workaround", "beware",
            "do not", "must not", "never use", "don't use", "doesn't work", "does not work",
            "won't work", "silently", "corrupt", "corrupted", "leak", "leaks",
            "注意", "坑", "千万别", "千万不要", "报错", "失败", "根因", "根本原因", "崩溃", "超时",
            "异常", "小心", "切记", "务必", "踩坑", "出错", "错误", "故障", "不生效", "泄漏",
        ],
        "weak": ["don't", "never", "avoid", "problem", "issue", "wrong", "不要", "别忘", "问题", "别用"],
    },
    "decision": {
        "strong": [
            "we decided", "decided to", "i decided", "let's go with", "we'll use", "we will use",
            "chose", "we chose", "going with", "we're going with", "settled on", "we picked",
            "opted for", "the decision", "decision is", "switched to", "we'll go with", "agreed to",
            "决定", "采用", "选定", "最终选择", "选择了", "定了", "就用", "改用", "确定用", "拍板",
        ],
        "weak": ["instead of", "rather than", "plan to", "we'll", "选择", "方案"],
    },
    "preference": {
        "strong": [
            "i prefer", "i'd prefer", "i like", "i love", "i hate", "i dislike", "i don't like",
            "i can't stand", "always use", "please always", "please use", "please don't",
            "my favorite", "my favourite", "i'd rather", "i enjoy", "i'm a fan of", "i'm into",
            "i really like", "i really love", "i adore", "i want",
            "我喜欢", "偏好", "习惯", "我更喜欢", "请用", "请始终", "我讨厌", "我不喜欢", "最爱",
            "我爱", "请不要", "我想要", "我希望", "更喜欢", "喜欢用",
            # rules a team keeps are what it insists on (issue 35): "We use pnpm for all …",
            # 告警只发到飞书群; "Never deploy on Fridays" is PREFERENCE_RULE_RE below
            "we use", "we always", "we never", "we only use", "our rule is", "the rule is",
            "只发", "只用", "一律", "统一用", "统一使用", "我们用", "我们使用", "我们只用", "禁止", "不允许", "不准",
        ],
        "weak": ["love", "favorite", "favourite", "prefer", "enjoy", "passionate about", "喜欢"],
    },
    "pattern": {
        "strong": [
            "usually", "whenever", "every time", "the way to", "steps:", "step 1", "the trick is",
            "the recipe", "the procedure", "in general", "as a rule", "the process is",
            "通常", "每次", "步骤", "一般来说", "流程", "方法是", "做法是", "首先", "第一步",
        ],
        "weak": ["typically", "normally", "often", "always", "routine", "一般", "总是", "然后"],
    },
    "fact": {
        "strong": [
            "is located", "was located", "located in", "moved to", "works at", "work at",
            "working at", "lives in", "live in", "born in", "was born", "got married",
            "married", "divorced", "graduated", "got engaged", "passed away", "got a job",
            "new job", "promoted", "adopted", "pregnant", "birthday", "anniversary", "years old",
            "搬到", "位于", "住在", "出生", "结婚", "毕业", "离职", "入职", "生日", "去世", "岁",
        ],
        "weak": [
            "started", "joined", "bought", "visited", "went to", "trip", "since", "ago",
            "去了",
        ],
    },
}

# Explicit importance markers.
IMPORTANT_CUES = ["remember", "important", "critical", "crucial", "key point", "must", "记住", "重要", "关键", "必须"]

# Link cues. CAUSE_FORWARD: this card states its own cause (card CAUSED_BY an earlier one).
# CAUSE_REVERSE: this card states what it caused (the earlier card CAUSED_BY this one).
CAUSE_FORWARD = [
    "because", "due to", "caused by", "as a result of", "thanks to", "was triggered by",
    "stems from", "因为", "由于",
]
# CAUSE_IS: the card names the cause of something said earlier ("the root cause was X"):
# the earlier card CAUSED_BY this one.
CAUSE_IS = [
    "the root cause", "root cause was", "root cause is", "the reason was", "the reason is",
    "turned out to be", "it turns out", "原因是", "根因", "起因", "罪魁祸首",
]
CAUSE_FORWARD_RE_EXTRA = [r"\bsince (?:we|i|it|they|he|she|you|the|this|that|there|our|my)\b"]
# A rule as an imperative with what it is about, opening a sentence: "Never deploy checkout on
# Fridays.", "Always run the linter first." (a preference: what someone insists on). Not "Never
# mind", "Always be …", nor a bare "Never npm here." (a "no" whose stance follows).
PREFERENCE_RULE_RE = [r"(?:^|(?<=[.!?]\s))(?:never|always)\s+(?!mind\b|be\b|been\b|again\b|ever\b)[a-z]{3,}(?:\s+[\w-]+){2}"]
CAUSE_REVERSE = ["led to", "leads to", "resulted in", "results in", "导致", "造成", "引起", "使得"]
CAUSE_REVERSE_RE_EXTRA = [r"\b(?:caus|trigger)(?:ed|es|s)\b(?!\s+by)"]
# Negated dependency phrases cancel a DEPENDS match ("不需要" contains "需要").
DEPENDS_NEG = ["不需要", "无需", "不依赖", "不用", "no need", "without needing", "needs no", "needs nothing"]
DEPENDS = [
    "requires", "required", "depends on", "dependent on", "needs", "need to have", "relies on",
    "rely on", "only works if", "only works when", "prerequisite", "must have", "is needed",
    "依赖", "需要", "前提是", "取决于", "要求",
]

# Words / sentences that carry no information on their own.
FILLER_WORDS = {
    "ok", "okay", "k", "kk", "sure", "yes", "yeah", "yep", "yup", "ya", "yah", "no", "nope", "nah",
    "right", "cool", "nice", "great", "awesome", "wow", "oh", "ah", "aw", "aww", "awww", "haha",
    "hahaha", "hah", "lol", "lmao", "rofl", "hmm", "hm", "um", "uh", "indeed", "exactly",
    "absolutely", "definitely", "totally", "agreed", "bye", "thanks", "thank", "thx", "ty",
    "cheers", "hey", "hi", "hello", "yo", "hiya", "howdy", "congrats", "congratulations",
    "amazing", "wonderful", "fantastic", "lovely", "sweet", "omg", "gosh", "yay", "woah", "whoa",
    "really", "so", "very", "super", "pretty", "well", "alright", "fine", "good", "sounds",
    "incredible", "impressive", "beautiful", "brilliant", "perfect", "neat", "dude", "man",
    "glad", "tbh", "btw", "anyway", "anyways", "true", "same", "welcome",
}
_FILLER_SENTENCES = [
    r"(?:hey|hi|hello|yo|hiya|howdy|greetings|good (?:morning|afternoon|evening|night)|morning|evening)(?:\s+(?:there|guys|all|everyone|again))?",
    r"(?:thanks|thank you|thx|ty|cheers|many thanks)(?:\s+(?:so much|a lot|a ton|again|for (?:that|this|everything|all|\w+ing|the \w+|your \w+|the kind words|your kind words)(?: \w+ing)?(?: me)?)){0,3}",
    r"(?:oh\s+)?(?:wow|omg|aw+|oh|ah|yay|whoa|woah|gosh|haha\w*|lol)",
    r"(?:(?:oh|wow|omg|aw+|yeah|yes|haha)\s+)?(?:that's|that is|that was|that sounds|sounds|it sounds|so|what an?|how|it's|this is|you're|you are|that looks|looks)(?:\s+(?:so|really|very|super|pretty|totally|just|absolutely|such an?))*\s+(?:cool|great|awesome|amazing|nice|wonderful|fantastic|lovely|sweet|fun|exciting|interesting|inspiring|beautiful|good|impressive|incredible|awesome news|great news|good news|great idea|good idea|true|right|brilliant|perfect|neat|rad|dope|stunning|gorgeous|adorable|cute|touching|heartwarming|special|crazy|wild|tough|hard|rough|sad|scary|intense)(?:\s+(?:news|idea|stuff|to hear|to see))?",
    r"(?:good|great|nice|so good|so nice) to (?:see|hear from|meet|talk to|chat with) you(?: again| too)?",
    r"how (?:have|are|were) (?:you|things)(?: been| doing)?(?: lately| recently)?",
    r"how's it going|what's up|what's new|what's up with you|long time no see|how about you|and you|you\?",
    r"(?:i'm|i am) (?:good|fine|great|ok|okay|doing (?:well|good|great|fine|ok|okay))(?:,? thanks| thank you)?",
    r"(?:glad|happy|so glad|so happy) (?:to hear (?:that|it)|to help|you liked it|you like it|for you)",
    r"you're welcome|no problem|no worries|np|anytime|of course|sure thing|my pleasure|you bet",
    r"(?:sounds|that sounds|makes|that makes) (?:good|great|like a plan|sense|fun|awesome|perfect)",
    r"me too|same here|you too|agreed|i agree|totally agree|exactly|absolutely|definitely|for sure|indeed|true|right|got it|i see|i know|makes sense",
    r"(?:bye|goodbye|see you|see ya|talk (?:to you )?(?:soon|later)|ttyl|catch you later|take care|good luck|have a (?:good|great|nice) (?:one|day|night|time|weekend))",
    r"(?:congrats|congratulations)",
    r"keep (?:it|that) up|keep going|you(?:'ve| have) got this|you got this|proud of you|i'm (?:so )?proud of you|good for you|way to go|well done|nice job|great job|good job",
    r"(?:ok|okay|k|kk|sure|yes|yeah|yep|yup|no|nope|nah|cool|nice|great|awesome|wow|haha|lol|hmm|um|alright|perfect|neat|right|true)",
    r"好的?|好啊|好吧|嗯+|哦+|噢|哇+|哈+|呵+|谢谢(?:你|您|啦|了)?|多谢|感谢|收到|明白(?:了)?|知道了|懂了|没问题|不客气|你好|您好|早上好|早|晚安|再见|拜拜|辛苦了|太好了|太棒了|厉害|牛|棒|对|对的|是的|是啊|行|可以|好嘞|ok|嗯嗯|哈哈哈*|没事|不用谢",
]
_SENTENCE_EDGE = r"[\s\W_]*"
_VOCATIVE = r"(?:[\s,]+(?-i:[A-Z][a-z]+))?"  # "Thanks, Mel!"
FILLER_SENTENCE_RE = re.compile(
    rf"^{_SENTENCE_EDGE}(?:(?:{'|'.join(_FILLER_SENTENCES)}){_VOCATIVE}{_SENTENCE_EDGE})+$", re.I
)

# Words that do not say what a title is about: counting and ordering words ("Two things stack up
# here.", "First, ..."). Titles only; keywords and informativeness still count them.
TITLE_VAGUE_WORDS = frozenset(
    "two three four five six seven eight nine ten first second third last next couple few several"
    " both either thing things part parts point points".split()
)
# A title that negates keeps its words when it is extended ("Let's not — …"): dropping them
# could say the opposite. English words (and any "n't"), Chinese characters.
NEGATION_WORDS = frozenset("no not never nope nah none neither nor without".split())
NEGATION_CJK_RE = re.compile(r"[不别没勿莫]")

# Leading interjections stripped from a title. "No"/"nope" only when they stand alone ("No, …",
# "Nope.") : "No npm please" says the opposite of "npm please".
TITLE_PREFIX_RE = re.compile(
    r"^(?:(?:(?:oh|wow|hey|hi|hello|well|so|yeah|yes|yep|yup|ok|okay|haha\w*|lol|um+|uh+|hmm+|ah+|aw+|omg|"
    r"thanks(?!\s+for)|thank you(?!\s+for)|btw|by the way|anyway|anyways|actually|honestly|gosh|man|dude|guess what|"
    r"you know what|just so you know|fyi|also|and|but|sure|alright|right|"
    r"嗯+|哦+|哇+|好的|对了|其实|那个|另外|还有|然后)(?=[\s,.!?…:;，。！？、-]|$)"
    r"|(?:nope|no)(?=\s*[,.!?…:;，。！？、]|\s*$))[\s,.!?…:;，。！？、-]*)+",
    re.I,
)

YES_NO_RE = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|no|nope|nah|sure|definitely|absolutely|not really|not yet|of course|"
    r"correct|right|exactly|是的?|对|不是|没有|有的?|不|嗯)\b",
    re.I,
)

STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each few for from further had hadn't has hasn't have haven't having he he'd he'll
he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't
it it's its itself let's me more most mustn't my myself no nor not of off on once only or other ought
our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than
that that's the their theirs them themselves then there there's these they they'd they'll they're
they've this those through to too under until up very was wasn't we we'd we'll we're we've were
weren't what what's when when's where where's which while who who's whom why why's with won't would
wouldn't you you'd you'll you're you've your yours yourself yourselves
just like get got getting go going gonna gotta wanna kinda sorta thing things lot lots much many
really also even still yet ever know knew think thought feel felt make made way well good great one
ones something anything everything nothing someone anyone everyone stuff bit little big new old
us let lets say said tell told see saw seen look looks looking want wanted need needed take took
come came give gave sure maybe though although since however always never often sometimes
yeah yes oh wow hey hi hello thanks thank ok okay haha lol hmm um ah aw awesome cool nice amazing
wonderful totally definitely absolutely super pretty glad happy love loved lovely time times day
days today tonight right now back again around there here us via etc e.g i.e per
went goes gone done given will last next yesterday tomorrow making having trying tried try
keep kept put found find able lately recently soon later ago week weeks month months year years
""".split()
)

# Technology and product names recognised as entities whatever their case, with their
# canonical spelling. Extend freely.
TECH_TERMS = [
    "Kuzu", "LanceDB", "PostgreSQL", "Postgres", "pgbouncer", "MySQL", "SQLite", "Redis", "MongoDB",
    "Elasticsearch", "OpenSearch", "Kafka", "RabbitMQ", "Docker", "Kubernetes", "k8s", "Helm",
    "nginx", "Apache", "Linux", "Ubuntu", "Debian", "macOS", "Windows", "WSL", "AWS", "GCP", "Azure",
    "S3", "EC2", "Lambda", "Terraform", "Ansible", "Grafana", "Prometheus", "systemd", "cron",
    "Python", "pip", "uv", "Poetry", "conda", "pytest", "pydantic", "FastAPI", "Django", "Flask",
    "NumPy", "pandas", "PyTorch", "TensorFlow", "CUDA", "Rust", "Cargo", "Go", "Java", "Node.js",
    "npm", "pnpm", "TypeScript", "JavaScript", "React", "Vue", "Git", "GitHub", "GitLab", "SSH",
    "OpenAI", "Anthropic", "Claude", "ChatGPT", "GPT-4", "Ollama", "vLLM", "SiliconFlow", "bge-m3",
    "httpx", "jinja2", "pluggy", "filelock", "OpenClaw", "Alaya", "MCP", "Cypher", "GraphQL",
    "gRPC", "JSON", "YAML", "TOML", "SQL", "HTTP", "HTTPS", "TLS", "DNS", "TCP", "UDP", "REST",
    "WebSocket", "Vim", "Neovim", "VS Code", "Emacs", "bash", "zsh", "tmux", "Jupyter", "Slack",
    "Notion", "Obsidian", "Markdown", "Celery", "Airflow", "Spark", "Hadoop", "ClickHouse",
    "DuckDB", "Snowflake", "BigQuery", "Supabase", "Vercel", "Cloudflare", "Heroku", "FAISS",
    "Qdrant", "Milvus", "Chroma", "pgvector", "LangChain", "LlamaIndex", "Hugging Face",
]
TECH_CANON: dict[str, str] = {t.lower(): t for t in TECH_TERMS}
# Single ASCII tokens among TECH_TERMS that are also ordinary English words: only counted
# when written with their canonical capitalisation.
TECH_AMBIGUOUS = frozenset({"go", "apache", "lambda", "spark", "chroma", "cargo", "helm", "rust", "alaya", "slack", "notion", "react", "vue", "poetry", "celery", "pip", "uv", "cron", "git"})

# Capitalised words that are not names when they start a sentence (besides STOPWORDS).
NOT_NAMES = frozenset(
    """
i i'm i've i'd i'll mr mrs ms dr yesterday today tomorrow tonight last next this that these those
monday tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december jan feb mar apr jun jul aug sep sept oct nov dec
please sorry thanks thank yes no yeah yep nope ok okay wow oh hey hi hello well so anyway also
congrats congratulations sounds glad happy good great nice cool awesome amazing lol haha omg
btw fyi anyways totally definitely absolutely sure right true gonna wanna actually honestly
""".split()
)

_TOKEN_RE = re.compile(r"[a-z0-9']+|[^\sa-z0-9']")
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def tokens(text: str) -> list[str]:
    """Lower-case word and punctuation tokens, curly apostrophes folded to '."""
    return _TOKEN_RE.findall(text.lower().replace("\u2019", "'"))


class CueMatcher:
    """Counts, in one pass over a text's tokens, how often each named phrase set occurs.

    Much faster than one big case-insensitive regex alternation per set: English phrases are
    looked up by their first token, Chinese ones with `str.count`."""

    def __init__(self, sets: dict[str, list[str]], extra: dict[str, list[str]] | None = None) -> None:
        self.names = list(sets)
        self._first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._cjk: list[tuple[str, str]] = []
        for name, phrases in sets.items():
            for p in phrases:
                if _CJK_RE.search(p):
                    self._cjk.append((p, name))
                else:
                    toks = tuple(tokens(p))
                    if toks:
                        self._first.setdefault(toks[0], []).append((toks, name))
        for lst in self._first.values():
            lst.sort(key=lambda x: -len(x[0]))
        self._extra = {n: re.compile("|".join(rx), re.I) for n, rx in (extra or {}).items()}

    def counts(self, text: str, toks: list[str] | None = None) -> dict[str, int]:
        out = dict.fromkeys(self.names, 0)
        if toks is None:
            toks = tokens(text)
        first = self._first
        n = len(toks)
        for i, tok in enumerate(toks):
            cands = first.get(tok)
            if not cands:
                continue
            done: set[str] = set()
            for phrase, name in cands:  # longest first; one hit per set per position
                if name in done:
                    continue
                k = len(phrase)
                if k == 1 or (i + k <= n and tuple(toks[i:i + k]) == phrase):
                    out[name] += 1
                    done.add(name)
        if self._cjk and _CJK_RE.search(text):
            for p, name in self._cjk:
                c = text.count(p)
                if c:
                    out[name] += c
        for name, rx in self._extra.items():
            out[name] += len(rx.findall(text))
        return out


_SETS: dict[str, list[str]] = {}
for _t, _c in TYPE_CUES.items():
    _SETS[f"{_t}.strong"] = _c.get("strong", [])
    _SETS[f"{_t}.weak"] = _c.get("weak", [])
_SETS["important"] = IMPORTANT_CUES
_SETS["cause_fwd"] = CAUSE_FORWARD
_SETS["cause_is"] = CAUSE_IS
_SETS["cause_rev"] = CAUSE_REVERSE
_SETS["depends"] = DEPENDS
_SETS["depends_neg"] = DEPENDS_NEG
CUES = CueMatcher(_SETS, {"cause_fwd": CAUSE_FORWARD_RE_EXTRA, "cause_rev": CAUSE_REVERSE_RE_EXTRA,
                          "preference.strong": PREFERENCE_RULE_RE})
