"""The words the lexical checks read (the signals of agent/admission/signals.py, conflicts,
removals): content terms, and the cue words that change what a sentence says about the person
(negation, conditionals, questions, other people, jokes), in English and Chinese.

Everything here is deliberately plain data: the thresholds and the reasons live where they are read, and
docs/EVIDENCE.md states them.
"""

from __future__ import annotations

import re
import unicodedata

from knowledge.search.stemming import stemmer

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A Latin word stops where CJK text starts ("我用Obsidian记笔记": 我用 / obsidian / 记笔记).
_TOKEN = re.compile(rf"[{CJK}]+|[^\W_{CJK}]+(?:'[^\W_{CJK}]+)*", re.UNICODE)
_CJK_RUN = re.compile(rf"^[{CJK}]+$")


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Function words: they carry no content of their own, so they neither count as substance nor as
# coverage. Contractions are listed folded ("i'm") as the tokenizer keeps them whole.
STOP = _wordset(
    """a an the is are was were be been being am to of and or in on for with at by from as it its this that
    these those there here i me my mine myself we us our you your yours he him his she her they them their
    it's i'm i've i'll i'd you're we're they're that's there's what's let's so too very just also really
    about into onto over under than then but if when while because yes ok okay oh um uh
    all any some each every much many more most such own same other which who whom whose what how why
    where s t d ll re ve m"""
)
# The reviewer's framing of an entry ("User prefers X", "Always uses X"): not a claim of its own,
# so not counted when asking whether the quotes cover the entry.
FRAMING = _wordset(
    """user users person people prefer prefers preferred preference like likes liked love loves want wants
    wanted use uses used using usual usually always generally typically often tend tends"""
)
# What a quote's substance does not count: articles, prepositions, conjunctions and forms of "be".
# The speaker's "I" counts: "I like tea" says something, "like tea" hardly.
GLUE = _wordset(
    """a an the is are was were be been being am to of and or in on for with at by from as into onto over under
    than then but so too very just also really s t d ll re ve m"""
)
# Chinese particles and the same framing, removed before CJK text is cut into bigrams.
CJK_FRAMING = re.compile(
    "用户|喜欢|偏好|更喜欢|总是|通常|一般|使用|想要|希望|[的了是在和也都很我你他她它吗呢吧啊呀把被就]"
)

# Words that mean the same to the check (stem -> shared stem), for the few paraphrases reviewers
# reach for all the time.
SYNONYMS = {
    "repli": "answer",
    "respons": "answer",
    "respond": "answer",
    "concis": "short",
    "brief": "short",
    "terse": "short",
    "verbos": "long",
    "lengthi": "long",
    "favourit": "favorit",
    "colour": "color",
}

# What a person says to acknowledge, never a statement about themselves.
ACK_WORDS = _wordset(
    """ok okay k kk sure yes yeah yep yup no nope thanks thank thx ty you so much a lot sounds sound good great
    perfect cool nice awesome fine alright right agreed noted got it that works work lgtm please go ahead
    do that will makes sense sense understood wonderful excellent amazing lovely brilliant indeed exactly
    true correct gotcha hmm hm oh ah well then
    danke schön gut super klar passt genau gracias vale perfecto bien claro merci parfait super bon
    d'accord grazie perfetto bene obrigado obrigada certo beleza"""
)
ACK_CJK = re.compile(
    "^(?:好的?|好吧|行|可以|没问题|谢谢|多谢|感谢|嗯+|对|是的?|收到|明白了?|知道了|懂了|好嘞|哦|啊|呢|吧|了|啦|呀|你)+$"
)


def norm(text: str) -> str:
    """Width and case folded, curly apostrophes straightened (so "don’t" reads as "don't")."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(norm(text))


def is_cjk(token: str) -> bool:
    return bool(_CJK_RUN.match(token))


def _stem(word: str) -> str:
    word = word.replace("'", "")
    stem = str(stemmer("english").stemWord(word))
    return SYNONYMS.get(stem, stem)


def cjk_bigrams(run: str) -> set[str]:
    """A CJK run cut at particles and framing words, then into character bigrams (a lone
    character stands for itself): Chinese has no spaces, and bigrams are how its words are matched."""
    found: set[str] = set()
    for piece in CJK_FRAMING.split(run):
        if len(piece) == 1:
            found.add(piece)
        found.update(piece[i : i + 2] for i in range(len(piece) - 1))
    return found


def content_terms(text: str, *, framing: bool = True) -> set[str]:
    """Stemmed content words and CJK bigrams; without the reviewer's framing words when `framing`
    is False."""
    found: set[str] = set()
    for tok in tokens(text):
        if is_cjk(tok):
            found |= cjk_bigrams(tok)
        elif tok not in STOP and (framing or tok not in FRAMING):
            found.add(_stem(tok))
    return found


def substance(text: str) -> int:
    """How much a quote says: its content words, plus the bigrams of its CJK text."""
    count = 0
    for tok in tokens(text):
        if is_cjk(tok):
            count += sum(len(p) - 1 for p in CJK_FRAMING.split(tok) if len(p) > 1)
        elif tok not in GLUE:
            count += 1
    return count


def is_acknowledgement(text: str) -> bool:
    toks = tokens(text)
    if not toks:
        return True
    said = [t for t in toks if is_cjk(t) or t not in STOP or t in ACK_WORDS]
    return all((ACK_CJK.match(t) is not None) if is_cjk(t) else t in ACK_WORDS for t in said)


def _words(*items: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w'])(?:" + "|".join(items) + r")(?![\w'])")


NEGATION = re.compile(
    _words(
        "not",
        "no",
        "never",
        "nothing",
        "nobody",
        "neither",
        "nor",
        "without",
        r"\w+n't",
        "cannot",
        "hate",
        "hates",
        "dislike",
        "dislikes",
        "avoid",
        "avoids",
        "stopped",
        "quit",
        "no longer",
        "anymore",
        "refuse",
        "refuses",
    ).pattern
    # Chinese negation characters, except inside common words that do not negate
    # (不错 "not bad", 特别 "especially", 别人 "others", 未来 "future", 无线 "wireless").
    + "|不(?![错过但仅久同管如论断])|没(?!错)|(?<![特区分个级类性识辨告])别(?![人的])|未(?!来)|无(?![线论])|勿"
    + "|讨厌|拒绝|从不|不再"
)
CONDITIONAL = re.compile(
    _words(
        "if",
        "unless",
        "suppose",
        "supposing",
        "imagine",
        "hypothetically",
        "wish",
        "maybe",
        "perhaps",
        "might",
        "someday",
        "one day",
        "in case",
        "were i",
        "considering",
        "thinking about",
        "thinking of",
        "wonder",
        "wondering",
    ).pattern
    + "|如果|要是|假如|假设|万一|的话|也许|可能|或许|想象|考虑|打算"
)
# A question to the assistant that is really a request ("can you answer in English?") is not a
# question about the person.
REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|kindly)\b|^(?:请|麻烦|能不能|可不可以|你能|你可以)"
)
QUESTION_START = re.compile(
    r"^(?:should|shall|do|does|did|is|are|am|was|can|could|would|will|what|how|which|why|whether|where|when"
    r"|who|any)\b"
)
QUESTION_CJK = re.compile("[吗呢]$|是否|要不要|该不该|应不应该|会不会|能不能|是不是|有没有|怎么|什么|为什么|哪")
THIRD_PARTY = re.compile(
    r"(?<![\w'])(?:my|our|his|her|their)\s+(?:\w+\s+)?(?:manager|boss|wife|husband|partner|friend|friends|colleague|"
    r"colleagues|coworker|coworkers|co-worker|team|teammate|teammates|mom|mum|mother|dad|father|brother|sister|son|"
    r"daughter|kid|kids|child|children|client|clients|customer|customers|company|neighbou?r|roommate|flatmate|"
    r"girlfriend|boyfriend|cto|ceo|lead|teacher|professor|family|parents|cousin|uncle|aunt|grandma|grandpa|"
    r"employer|landlord|doctor|dentist)(?![\w'])"
    r"|(?<![\w'])(?:he|she|they|he's|she's|they're|someone|somebody|everyone|everybody|people|others)(?![\w'])"
    r"|(?<![\w'])(?:said|says|told me|thinks|think that|according to|recommends|recommended|suggested|suggests)"
    r"(?![\w'])"
    r"|我(?:的)?(?:老板|经理|领导|上司|同事|朋友|老婆|老公|妻子|丈夫|太太|先生|妈妈?|爸爸?|哥哥?|姐姐?|弟弟?|妹妹?|儿子|"
    r"女儿|孩子|客户|室友|男朋友|女朋友|家人|父母|老师|团队|公司)"
    r"|(?<!其)他们?|(?<!其)她们?|别人|有人|大家|他说|她说"
)
JOKE = re.compile(
    _words("lol", "lmao", "rofl", "haha\\w*", "hehe\\w*", "jk", "kidding", "joking", "joke", "yeah right").pattern
    + "|[\U0001f602\U0001f923\U0001f61c\U0001f61d\U0001f609\U0001f643]|哈哈|呵呵|开玩笑|逗你|说笑"
)
SUCCESS = re.compile(
    _words(
        "it worked",
        "that worked",
        "this worked",
        "worked",
        "works now",
        "it works",
        "that works",
        "fixed",
        "solved",
        "success",
        "succeeded",
        "done",
        "all good",
        "passes",
        "passed",
    ).pattern
    + "|\U0001f44d|成功|可以了|好了|搞定|解决了|能用了|通过了"
)
FAILURE = re.compile(
    r"(?<![\w'])(?:error|errors|failed|failure|fatal|traceback|exception|denied|not found|no such|refused|"
    r"panic|segmentation fault|exit (?:code|status) [1-9]\d*)(?![\w'])|\"success\":\s*false|失败|错误|报错"
)
