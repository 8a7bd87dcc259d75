"""Concepts: the states, feelings, goals and areas of life a text is about, from a lexicon, so
that a message reaches an old memory that shares its meaning but not its words (issue 32,
"Bridges in the graph").

"After learning to say no, I've felt a lot less stressed" and, weeks later, "I ended up
volunteering for that project, and now I'm totally overwhelmed" share no word and, for the hash
embedder, no vector; both are about nervousness and work. Every distiller's card is filed
under the few concepts its words name most (`about/<concept>` tags, plan.py), and a card that
states a stance (a cause, goal, value or lasting state: `STANCE`) also under `about/stance`;
the full-text row of a stance card holds those tags as words of their own (models.index_row).
A message telling of one's situation (recall/intent.py, `situation`) searches its concepts as
one more ranked list (recall/navigate.py, `recall.concept_weight`), so the stance card of the
same state joins the candidates though no word of the message is in it.

The lexicon is Empath's (Fast et al., CHI 2016; MIT, data/EMPATH-LICENSE.txt): 194 categories
(nervousness, pain, work, family, money, trust, …), each a list of English words grown from seed
words and checked by crowd workers, read unchanged from data/empath.tsv. Chinese words for the
categories people talk about most (`_ZH`) are this project's own, written from general usage.
A word is looked up as it is and lightly stemmed (text.stem), on both sides alike.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from ..models import CONCEPT_TAG
from ..text import CJK_CHAR, STOPWORDS, stem, words

LEXICON = Path(__file__).with_name("data") / "empath.tsv"
TAG = CONCEPT_TAG  # a card's concept tags: `about/nervousness` (recall/tags.py reads `/` as a path)
# A card that states where a person stands: a cause of how they live now, a goal, a value, a
# lasting state ("since the accident I …", "because I want to …", "I believe …", 因为, 为了, 我相信).
# A message that tells of one's situation ("I'm totally overwhelmed") is often answered by such a
# card of weeks before (issue 32, LoCoMo-Plus): general discourse markers, English and Chinese.
STANCE = re.compile(
    r"\b(?:because|ever since|as a result|that['’]?s why|which is why|made me|makes me|led me to|"
    r"taught me|pushed me|so that|in order to|(?:want|wanted|hope|hoping|plan|planning|aim|aiming|trying|"
    r"determined|working|saving up) (?:to|for|toward)|my (?:goal|dream|plan)|i believe|believe in|i value|"
    r"(?:matters|important) to me|i always|i never|i refuse|i(?:['’]ve| have) (?:been|learned|started|stopped)|"
    r"lately|these days)\b"
    r"|因为|所以|自从|导致|让我|为了|想要|打算|计划|目标|希望|梦想|我相信|我认为|对我来说|原则|总是|从不|最近|一直",
    re.IGNORECASE)
STANCE_TAG = TAG + "stance"  # the tag of a card that says one (`concept_tags`)
# concepts filed per card: the ones its words name most (a word names several categories, and
# the many a card touches once each say little about it). LoCoMo-Plus half A cue@2000 with
# every card filed (an earlier variant): 0.305 at 4, 0.293 at 6
PER_CARD = 4
# the concepts of a message recall searches for, the strongest first; half A cue@2000 / mrr
# (an earlier variant that searched `stance` too): 3: 0.280 / 0.061, 6: 0.280 / 0.087, 12: 0.256 / 0.106
PER_QUERY = 6

# Chinese words per Empath category, substrings of the text (no segmentation needed)
_ZH: dict[str, tuple[str, ...]] = {
    "nervousness": ("紧张", "焦虑", "压力", "担心", "不安", "害怕", "慌", "崩溃", "忐忑"),
    "fear": ("害怕", "恐惧", "吓", "可怕", "惊恐"),
    "sadness": ("难过", "伤心", "悲伤", "哭", "失落", "沮丧", "心碎"),
    "anger": ("生气", "愤怒", "恼火", "发火", "气死"),
    "irritability": ("烦", "烦躁", "不耐烦", "恼火"),
    "joy": ("开心", "高兴", "快乐", "喜悦", "幸福"),
    "shame": ("丢脸", "尴尬", "羞愧", "难为情"),
    "disappointment": ("失望", "落空", "泄气"),
    "suffering": ("痛苦", "煎熬", "折磨", "受罪"),
    "weakness": ("累", "疲惫", "虚弱", "没力气", "精疲力尽", "透支"),
    "sleep": ("睡", "失眠", "熬夜", "困", "作息"),
    "health": ("健康", "身体", "体检", "养生", "锻炼"),
    "medical_emergency": ("急诊", "住院", "手术", "抢救", "救护车"),
    "injury": ("受伤", "骨折", "扭伤", "伤口", "摔"),
    "pain": ("疼", "痛", "酸痛", "头疼", "腰疼"),
    "healing": ("康复", "恢复", "痊愈", "治疗", "复健"),
    "exercise": ("运动", "锻炼", "跑步", "健身", "训练"),
    "eating": ("吃", "饭", "饮食", "节食", "零食"),
    "cooking": ("做饭", "烹饪", "下厨", "厨房"),
    "work": ("工作", "上班", "加班", "项目", "任务", "同事"),
    "office": ("办公室", "公司", "会议室", "工位"),
    "business": ("生意", "创业", "公司", "客户", "业务"),
    "occupation": ("职业", "工作", "职位", "岗位", "跳槽"),
    "achievement": ("成就", "目标", "成功", "完成", "晋升", "升职"),
    "meeting": ("开会", "会议", "例会"),
    "money": ("钱", "工资", "存钱", "花钱", "预算", "贷款", "房贷"),
    "economics": ("经济", "开销", "省钱", "消费"),
    "family": ("家人", "家庭", "父母", "爸爸", "妈妈", "孩子", "老公", "老婆", "爷爷", "奶奶"),
    "children": ("孩子", "儿子", "女儿", "宝宝", "小孩"),
    "friends": ("朋友", "好友", "闺蜜", "兄弟"),
    "love": ("爱", "恋爱", "男朋友", "女朋友", "伴侣"),
    "wedding": ("婚礼", "结婚", "婚姻"),
    "home": ("家", "房子", "公寓", "搬家", "租房"),
    "school": ("学校", "考试", "上课", "作业", "老师"),
    "college": ("大学", "研究生", "论文", "博士"),
    "reading": ("读书", "看书", "阅读", "小说"),
    "traveling": ("旅行", "旅游", "出差", "行李"),
    "air_travel": ("航班", "飞机", "机场", "登机"),
    "vacation": ("假期", "度假", "休假", "放假"),
    "trust": ("信任", "相信", "信赖"),
    "deception": ("撒谎", "骗", "欺骗", "说谎"),
    "help": ("帮忙", "帮助", "照顾", "支持"),
    "giving": ("送", "捐", "分享", "付出"),
    "independence": ("独立", "自由", "自己做主"),
    "death": ("去世", "死", "葬礼", "离开人世"),
    "pet": ("猫", "狗", "宠物"),
    "music": ("音乐", "唱歌", "钢琴", "吉他"),
    "art": ("画画", "艺术", "绘画", "展览"),
    "phone": ("手机", "电话"),
    "internet": ("网上", "上网", "网络"),
    "shopping": ("购物", "买", "逛街", "网购"),
    "noise": ("吵", "噪音", "嘈杂"),
    "dispute": ("吵架", "争吵", "矛盾", "冲突"),
    "communication": ("沟通", "聊天", "交流", "谈话"),
    "timidity": ("害羞", "内向", "胆小", "腼腆"),
}


# Empath categories left out: genres of fiction, shapes and materials of things, bare polarity
# and the like say nothing of a person's state, goals or areas of life, and their words ("photo"
# is journalism, "drained" liquid) would file most cards under them
_LEFT_OUT = frozenset("""
magic superhero legend medieval ancient royalty monster exotic hipster journalism divine heroic
fabric shape_and_size liquid order tool movement sound cold water ocean ship sailing terrorism war
military weapon kill swearing_terms masculine feminine attractive lust sexual appearance ugliness
beauty childish toy dominant_heirarchical dominant_personality anonymity urban rural gain valuable
power strength breaking animal plant emotional positive_emotion negative_emotion zest warmth
""".split())


@lru_cache(maxsize=1)
def _lexicon() -> tuple[dict[str, frozenset[str]], dict[str, int]]:
    """Word (as written and stemmed) → its categories, and each category's size (a smaller
    category is the more specific one: it wins a tie)."""
    by_word: dict[str, set[str]] = {}
    size: dict[str, int] = {}
    for line in LEXICON.read_text(encoding="utf-8").splitlines():
        name, *members = line.split("\t")
        if name in _LEFT_OUT:
            continue
        size[name] = len(members)
        for word in members:
            for form in {word.lower(), stem(word.lower())}:
                by_word.setdefault(form, set()).add(name)
    return {w: frozenset(c) for w, c in by_word.items()}, size


def counts(text: str) -> Counter[str]:
    """How strongly the text's words name each concept: a word shares its one vote among the
    categories it is in ("overwhelm" is in eleven, "stress" in three)."""
    by_word, _ = _lexicon()
    found: Counter[str] = Counter()
    for word in words(text):
        if word in STOPWORDS:
            continue
        named = by_word.get(word, frozenset()) | by_word.get(stem(word), frozenset())
        found.update(dict.fromkeys(named, 1 / len(named)) if named else {})
    if CJK_CHAR.search(text):
        found.update(name for name, terms in _ZH.items() for term in terms if term in text)
    return found


def concepts(text: str, limit: int | None = None) -> list[str]:
    """The text's concepts, the most often named first (ties: the more specific category),
    at most `limit` of them."""
    _, size = _lexicon()
    ranked = sorted(counts(text).items(), key=lambda kv: (-kv[1], size.get(kv[0], 0), kv[0]))
    return [name for name, _ in ranked[:limit]]


# What a card says that is not what someone said: a line's speaker head ("Caroline (8 May 2023): ")
# and the notes in brackets (an image's caption, a resolved date)
_NOT_SAID = re.compile(r"^[^\n:]{1,60}?(?: \([^)\n]*\))?: |\[[^\]]*\]", re.MULTILINE)


def search_phrase(text: str, limit: int = PER_QUERY) -> str:
    """What recall searches the index for to find the cards filed under the concepts of a
    message telling of one's situation: their tags as the full-text rows hold them
    (models.concept_words), which only the rows of cards stating a stance do. Not `stance`
    itself: every such card would match it, sharing no concept with the message."""
    return " ".join(f"{TAG}{name}".replace("/", "_") for name in concepts(text, limit))


def concept_tags(text: str, limit: int = PER_CARD) -> list[str]:
    """A card's concept tags (`about/<concept>`, and `about/stance` when it states one), from
    what its speakers said; added to every distiller's cards (plan.py)."""
    said = _NOT_SAID.sub(" ", text)
    found = [TAG + name for name in concepts(said, limit)] if limit else []
    return [*found, STANCE_TAG] if STANCE.search(said) else found
