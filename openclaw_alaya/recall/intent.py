"""Question intent (issue 18) and the entity and opinion recall shapes (issue 16): which cards
answer a kind of question, as a bounded boost to their score, never a filter.

Words and meaning find the cards about the topic; they do not tell "which package manager?"
apart from "how do I set up a package": the first is answered by a preference or a decision,
the second by a pattern or a gotcha. So a question is classified (English and Chinese, by its
phrasing: no model) and a card whose type (`preference`, `decision`, `fact`, `gotcha`,
`pattern`, …) or workspace kind (`opinion`, `world`, …) answers that kind of question scores
× (1 + `recall.intent.answer`); one that often answers it too × (1 + `near`). The entity shape
("tell me about Peter", "who is Peter", 介绍一下张三, 张三是谁) and the opinion shape ("what does
Peter prefer?") name an entity: a card naming it gains `entity` more, and for the entity shape
reflect's summary card of the entity answers (it comes first, then the entity's facts). Entity
shapes are read only from those explicit forms. A question that names a person ("what did
Melanie paint?", "how did Jon feel …") is mostly answered by what that person said, so a card
whose last turn (the reply, for a question/answer card) that person said gains `speaker`: the
speaker is read from the content's `Name (date): ` line heads. The person is the question's
first name past its opening word, with any names joined to it ("Jon and Gina"); a name further
on is who it is about, not who says it ("what did Jon say about Gina's store?"), and an acronym
("LGBTQ") is no name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..config import IntentWeights
from ..distill.concepts import STANCE
from ..models import ENTITY_TYPE, Card
from ..text import content_words


@dataclass(frozen=True)
class Intent:
    """What a question asks for: the card types and kinds that answer it, and an entity."""

    name: str
    answers: frozenset[str] = frozenset()  # card types and kinds (their names do not overlap)
    near: frozenset[str] = frozenset()  # types that often answer it as well
    dated: bool = False  # a card with a date (`occurred`) answers it too
    states: re.Pattern[str] | None = None  # a card whose text says this answers it (issue 35)
    entity: str | None = None  # the entity the entity or opinion shape asks about


# A card that names a cause, as the distiller's CAUSE_IS cues do (distill/cues.py): "the root
# cause was …", "it turned out …", 原因是. Not a passing "because": in the demo incident most cards
# say one, and the follow-up suggestion would answer "why" as well as the root cause.
CAUSE = re.compile(
    r"\b(?:root cause|the reason (?:was|is)|turned out|it turns out|was caused by|is caused by)\b"
    r"|原因是|根因|根本原因|起因|罪魁祸首", re.IGNORECASE)


# A card that says where someone or something is: the distiller's place cues (distill/cues.py)
PLACE = re.compile(
    r"\b(?:lives? in|living in|moved to|moving to|based in|located in|relocated to|is in|are in)\b"
    r"|住在|搬到|搬去|位于|定居|在\w{1,8}(?:工作|生活)", re.IGNORECASE)


# A message that is no question and speaks of oneself: the situation shape
_FIRST_PERSON = re.compile(r"\b(?:i|i['’](?:m|ve|d|ll)|my|me|we|our|us)\b|我", re.IGNORECASE)
_QUESTION = re.compile(r"[?？]|^\s*(?:what|when|where|which|who|whom|whose|why|how|do|does|did|is|are|can|could|should)\b"
                       r"|吗|什么|哪|谁|为什么|怎么|如何|多少", re.IGNORECASE)
_SITUATION = Intent("situation", states=STANCE)


def _words(*phrases: str) -> re.Pattern[str]:
    """English phrases on word boundaries, case-insensitive (`'` also matches `’`)."""
    alternatives = "|".join(p.replace("'", "['’]") for p in phrases)
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


def _chars(*phrases: str) -> re.Pattern[str]:
    """Chinese phrases as substrings."""
    return re.compile("|".join(map(re.escape, phrases)))


_NAME = r"(?P<entity>[^\s?？!！.,，。'’]+(?:\s+[^\s?？!！.,，。'’]+){0,2}?)"  # one to three words
_ZH_NAME = r"(?P<entity>[^\s?？!！.,，。、的]{1,12}?)"
_END = r"\s*[?？!！.。]*\s*$"
_PRONOUNS = {"i", "we", "you", "they", "he", "she", "it", "me", "us", "them", "the team", "people",
             "我", "我们", "你", "你们", "他", "她", "他们", "她们", "大家", "团队"}

# Entity and opinion shapes: explicit forms only ("who is Melanie a fan of …" asks no entity question)
_ENTITY = [
    re.compile(rf"^\s*(?:tell me about|who is|who's|what do (?:you|we) know about)\s+(?:the\s+)?{_NAME}{_END}", re.IGNORECASE),
    re.compile(rf"^\s*(?:介绍一下|介绍下|说说|讲讲|关于){_ZH_NAME}(?:吧|的情况|这个人)?{_END}"),
    re.compile(rf"^\s*{_ZH_NAME}是谁{_END}"),
    re.compile(rf"^\s*你(?:对|知道){_ZH_NAME}(?:了解多少|知道什么|的什么)?{_END}"),
]
_OPINION = [
    re.compile(rf"^\s*(?:what|which \w+|how) (?:does|do|did) {_NAME} (?:prefer|like|think|believe|feel|want)\b", re.IGNORECASE),
    re.compile(rf"^\s*{_ZH_NAME}(?:喜欢什么|偏好什么|更喜欢|有什么偏好|的偏好|怎么看|觉得|认为)"),
]

_PREFERENCE = Intent("preference", frozenset({"preference", "opinion"}), frozenset({"decision"}))
# "tell me about Peter" is answered first by reflect's summary of Peter (a card of ENTITY_TYPE)
_SHAPES = [(_ENTITY, Intent("entity", frozenset({ENTITY_TYPE}))), (_OPINION, replace(_PREFERENCE, name="opinion"))]

# Kinds of question, first match wins; each with the card types (and kinds) that answer it.
_KINDS: list[tuple[Intent, re.Pattern[str], re.Pattern[str]]] = [
    (_PREFERENCE,
     _words("prefer", "prefers", "preferred", "preference", "preferences", "favou?rite", "like to use"),
     _chars("偏好", "喜欢", "习惯", "更愿意")),
    (Intent("decision", frozenset({"decision"}), frozenset({"preference"})),
     _words("decide", "decided", "decision", "decisions", "choose", "chose", "chosen", "choice",
            "pick", "picked", "go with", "went with", "settle on", "settled on", "agree on", "agreed on"),
     _chars("决定", "选了", "选择", "选定", "定了", "拍板", "采用了")),
    # where: answered by the card that says where ("Ilse moved to Rotterdam."), not by one that
    # only names the person ("lunch with Ilse"); before `choice`, which "which city" would match
    (Intent("place", states=PLACE),
     _words(r"^\s*where", r"(?:which|what) (?:city|country|town|place)", "whereabouts"),
     _chars("在哪", "哪里", "哪儿", "住哪", "哪个城市", "什么地方")),
    (Intent("choice", frozenset({"preference", "decision"})),  # "which package manager?", 用哪个
     _words(r"which(?!\s+(?:one\s+)?(?:is|was|are|were)\b)", r"what \w+(?: \w+)? (?:do|did|should) (?:we|i) use"),
     _chars("用哪个", "哪个", "哪种", "用什么", "选哪")),
    # why: answered by the card that states the cause ("The root cause was the session leak …"),
    # whatever its type; recall also follows cause edges from the matching cards (causes.py);
    # before `how-to`, whose 怎么 怎么回事 holds
    (Intent("cause", states=CAUSE),
     _words(r"^\s*why", "how come", r"what (?:caused|causes|led to)", r"(?:the )?(?:root )?causes? of",
            r"(?:the )?reasons? (?:for|why)"),
     _chars("为什么", "为啥", "什么原因", "原因是", "怎么回事", "什么导致", "为何")),
    # how-to: a gotcha or pattern often answers, but so does any card that walks through the steps
    # (the demo's "how do we upgrade Kuzu" fact), so only the `near` gain
    (Intent("how-to", near=frozenset({"gotcha", "pattern"})),
     _words(r"how (?:do|can|should|would) (?:i|we|you)", "how to", r"what's the (?:best )?way to",
            r"what is the (?:best )?way to", "steps to"),
     _chars("怎么", "如何", "怎样", "步骤", "方法")),
    (Intent("time", frozenset({"fact"}), dated=True),
     _words(r"^\s*when", r"what (?:date|day|year|month|time)", "how long ago", "since when"),
     _chars("什么时候", "何时", "哪天", "哪一天", "几号", "哪年", "几月", "多久以前")),
    (Intent("person", frozenset({"fact"}), frozenset({"world", "experience"})),
     _words(r"^\s*who", "whom", "whose"),
     _chars("谁")),
]


def states(card: Card, pattern: re.Pattern[str]) -> bool:
    """Whether the card's title or content says what `pattern` looks for."""
    return bool(pattern.search(card.title) or pattern.search(card.content))


def classify(question: str) -> Intent | None:
    """The intent of a question, or None when its phrasing says nothing about what answers it."""
    question = question.strip()
    for shapes, intent in _SHAPES:
        for shape in shapes:
            found = shape.match(question)
            if found and found.group("entity").lower() not in _PRONOUNS:  # "what do we prefer": a preference question
                return replace(intent, entity=found.group("entity"))
    for intent, english, chinese in _KINDS:
        if english.search(question) or chinese.search(question):
            return intent
    return _SITUATION if situation(question) else None


def situation(text: str) -> bool:
    """Whether a message tells of one's own situation rather than asks something: the shape a
    card stating a cause, goal, value or lasting state answers (distill/concepts.py, STANCE)."""
    return bool(_FIRST_PERSON.search(text)) and not _QUESTION.search(text)


# A line's speaker head as the distiller writes it, one to three capitalised words ("Melanie (8 May
# 2023): …", "Jon Doe: …"; not "Bob is careful: …"), and a capitalised word that does not open
# the question (a name: "What did Melanie paint?")
_SPEAKER_HEAD = re.compile(r"^([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})(?: \([^)\n]*\))?: ", re.MULTILINE)
_NAME_WORD = re.compile(r"(?<=\s)[A-Z][\w-]+")
_PERSON = r"[A-Z][a-z][\w-]*"  # a capitalised word, not an acronym ("LGBTQ", "AWS")
_SPEAKERS = re.compile(rf"(?<=\s){_PERSON}(?:\s*(?:,|and|&)\s*{_PERSON})*")


def speakers(question: str) -> frozenset[str]:
    """The people a question asks about as who said or did it: its first name and the names
    joined to it ("Jon and Gina"), not a name further on ("what did Jon say about Gina's
    store?": Jon said it)."""
    found = _SPEAKERS.search(question)
    if not found:
        return frozenset()
    return frozenset(w.lower() for w in re.findall(_PERSON, found.group(0)))


def without_names(question: str) -> str | None:
    """The question without the people it names (its capitalised words past the first), when
    at least two content words are left; None when it names nobody or is mostly names ("who is
    Tomás?")."""
    if not _NAME_WORD.search(question):
        return None
    rest = " ".join(_NAME_WORD.sub(" ", question).split())
    return rest if len(content_words(rest)) >= 2 else None


def last_speaker(card: Card) -> str | None:
    """Who says the card's last turn (lower-cased first word of its head): the reply, for a
    question/answer card; None when its content has no speaker heads."""
    heads = _SPEAKER_HEAD.findall(card.content)
    return heads[-1].split()[0].lower() if heads else None


class IntentBoost:
    """The factor each card's score is multiplied by for a question's intent: relative to the
    other cards, an answering one gains × (1 + answer), a near one × (1 + near), one naming the
    entity × (1 + entity) more, and one whose last turn a person the question names said
    × (1 + speaker) more."""

    def __init__(self, intent: Intent | None, weights: IntentWeights, names: frozenset[str] = frozenset()) -> None:
        self.intent = intent
        self.weights = weights
        self.entity = intent.entity.lower() if intent and intent.entity else None
        self.names = names  # empty when `speaker` is 0 (`of`)
        # what the best-answering card gains, which it keeps: recall's scores stay within 0..1
        # and the intent only lowers a score, as the other penalties do (navigate._final_order)
        # the entity shape's answer, reflect's summary of the entity, gains as much as naming it
        # does: the summary comes first, then the cards naming the entity
        self.summary = bool(intent and self.entity and ENTITY_TYPE in intent.answers)
        answering = max(weights.answer, weights.near, weights.entity if self.summary else 0.0) if intent else 0.0
        self.ceiling = 1.0 + answering + (weights.entity if self.entity else 0.0) + (weights.speaker if self.names else 0.0)

    @classmethod
    def of(cls, question: str | None, weights: IntentWeights) -> "IntentBoost | None":
        """The boost for a question, None when it has no intent and names no one."""
        if not question:
            return None
        intent = classify(question)
        names = speakers(question) if weights.speaker else frozenset()
        return cls(intent, weights, names) if intent or names else None

    def factor(self, card: Card) -> float:
        """1 for a card that answers the question best, down to 1 / ceiling for one that does not."""
        intent, w = self.intent, self.weights
        names_entity = bool(self.entity) and any(e.lower() == self.entity for e in card.entities)
        if intent is None:
            gain = 0.0
        elif self.summary and names_entity and card.type == ENTITY_TYPE:
            gain = max(w.answer, w.entity)
        elif (card.type in intent.answers or card.kind in intent.answers or (intent.dated and card.occurred)
              or (intent.states is not None and states(card, intent.states))):
            gain = w.answer
        elif card.type in intent.near or card.kind in intent.near:
            gain = w.near
        else:
            gain = 0.0
        if names_entity:
            gain += w.entity
        if self.names and last_speaker(card) in self.names:
            gain += w.speaker
        return (1.0 + gain) / self.ceiling
