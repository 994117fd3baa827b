"""Secrets said in words: "the wifi password is hunter2", "PIN: 1234", "das Passwort ist …".

detect-secrets recognises keys by their shape and assignments written as code; a person in a chat
says a password in a sentence, in English, German, Spanish or French. A phrase is a name of a
secret ("password", "mot de passe", "clave del wifi", "API key", "PIN"), maybe a qualifier ("for the
router"), a connector ("is", "ist", "es", "est", ":", "=") and the value.

The hard part is what is not a secret: "the password is stored in 1Password", "the PIN is 4 digits",
"the API key is in .env". A value is taken when it looks like a password (a digit, a symbol,
mixed case), or when a plain word ends the clause ("the wifi password is sunshine."); never when it
is a function word, a state ("wrong", "expired", "gespeichert"), a placeholder or a variable's name.
Only the value is reported, so the words around it can be kept when it is redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["REDACTED", "PhraseHit", "find_phrases", "is_placeholder"]

# What a redacted value is replaced by; a value stops where an earlier redaction left this.
REDACTED = "[redacted]"


@dataclass(frozen=True)
class PhraseHit:
    what: str
    start: int
    end: int


# Names of secrets, grouped by what a person is told was found. "phrase" names take every word up
# to the end of the clause (a seed phrase is twelve words); the others take one value.
# Bare "key", "secret", "clave", "code" and "Schlüssel" are left out: "the key is patience",
# "la clave es practicar" and "le code est propre" are ordinary sentences.
_NAMES: tuple[tuple[str, str, bool], ...] = (
    (
        "a passphrase",
        r"pass[ -]?phrase|(?:seed|recovery|mnemonic|backup)[ -]phrase|phrase[ -]secr[eè]te"
        r"|phrase[ -]de[ -]passe|frase[ -]de[ -](?:contrase[nñ]a|paso|acceso)",
        True,
    ),
    ("a PIN", r"pin(?:[ -]?(?:code|number|nummer))?|c[oó]digo[ -]pin|code[ -]pin|geheimzahl", False),
    ("an access code", r"(?:alarm|door|gate|entry|access|garage|lock|unlock|safe|keypad)[ -]?code", False),
    ("a card security code", r"cvv2?|cvc2?|card[ -]security[ -]code", False),
    ("a recovery code", r"(?:recovery|backup|2fa|mfa|otp)[ -]code", False),
    (
        "an API key",
        r"api[ _-]?(?:key|token|secret)|cl(?:é|e)[ -](?:d'|de[ -]l'|de[ -])?api"
        r"|clave[ -](?:de[ -](?:la[ -])?)?api|api[ -]?schl(?:ü|ue)ssel|license[ _-]?key",
        False,
    ),
    ("a secret key", r"(?:secret|private)[ _-]?(?:access[ _-]?)?key|client[ _-]?secret|signing[ _-]?secret", False),
    (
        "an access token",
        r"(?:(?:access|auth|bearer|refresh|session|personal[ _-]access|bot)[ _-]?)?token"
        r"|jeton(?:[ -]d'acc[eè]s)?",
        False,
    ),
    (
        "a password",
        r"pass(?:word|wd|code)|pwd|pw|(?:wi-?fi|wlan|wpa2?|network|netzwerk)[ _-]?(?:key|schl(?:ü|ue)ssel)"
        r"|(?:[a-zäöüß]+-?)?(?:passwort|kennwort)|zugangscode|contrase[nñ]a|clave[ -](?:de[ -]acceso|secreta"
        r"|(?:de[ -](?:la[ -])?|del[ -])?(?:wi-?fi|red))|c[oó]digo[ -](?:de[ -]acceso|secreto)|mot[ -]de[ -]passe"
        r"|code[ -](?:secret|d'acc[eè]s|wi-?fi)|cl(?:é|e)[ -](?:secr[eè]te|wi-?fi|wpa)",
        False,
    ),
)

# "for the router", "de la red", "du wifi", "für das WLAN", "wifi": what the secret opens.
_QUALIFIER = (
    r"(?:[ \t]+(?:wi-?fi|wlan|wpa2?|admin|root|ssh|sudo))?"
    r"(?:[ \t]+(?:for|to|of|on|at|für|fürs|vom|von|zum|zur|del?|para|du|des|pour|de[ \t]+la|de[ \t]+l')"
    r"(?:[ \t]+[\w.@'’-]+){1,3}?)?"
)
# "is", "was set to", "ist jetzt", "lautet", "es", "est", ":", "=", "->", "'s".
_CONNECTOR = (
    r"(?:[ \t]*(?:[:=]|->|=>|→)[ \t]*"
    r"|['’]s[ \t]+"
    r"|[ \t]+(?:is|was|ist|lautet|war|hei(?:ß|ss)t|es|era|est|était|etait)"
    r"(?:[ \t]+(?:now|still|set[ \t]+to|changed[ \t]+to|jetzt|nun|ahora|maintenant))?[ \t]*:?[ \t]+)"
)
_QUOTES = "\"'“”‘’«»„`"
_VALUE = rf"(?:(?P<q>[{_QUOTES}])(?P<qv>[^{_QUOTES}\n]{{1,200}})[{_QUOTES}]|(?P<v>[^\s{_QUOTES}]{{1,200}}))"

_PATTERNS: tuple[tuple[str, bool, re.Pattern[str]], ...] = tuple(
    (
        what,
        phrase,
        re.compile(
            # Not inside a longer word ("1Password", "passwords", "Passwort-Manager"), but an
            # underscore may join it to a prefix: DB_PASSWORD=…, OPENAI_API_KEY=….
            rf"(?<![^\W_])(?:{names})(?![\w-]){_QUALIFIER}{_CONNECTOR}{_VALUE}",
            re.IGNORECASE,
        ),
    )
    for what, names, phrase in _NAMES
)


def _words(text: str) -> frozenset[str]:
    """A word list written as text, a language to a paragraph."""
    return frozenset(text.split())


# Words that follow "the password is" in a sentence that does not say it: articles, pronouns,
# prepositions, states. Lower case; the participle endings are checked separately.
_STOPWORDS = _words(
    """
    a an the this that these those it its my your our their his her one some any every each
    in inside into on onto at for from to of by with without as under over behind via through
    stored saved kept set not no never also still now just only always usually often sometimes
    same different wrong right correct incorrect invalid valid expired required optional needed
    necessary mandatory missing empty blank weak strong secure insecure safe unsafe long short too
    very case-sensitive sensitive hidden encrypted hashed unknown known private public secret shared
    random new old default temporary temp true false yes none null nil undefined n/a na tbd unset
    off enabled disabled ok okay fine good bad important something anything nothing what which where
    how who why when there here being been be written printed shown listed mentioned given sent
    attached below above following like available unavailable locked compromised leaked handled
    changing rotating about more less than and or but so if because exactly probably maybe
    reused unique easy hard simple complex forgotten lost is are was were will would should
    der die das den dem des ein eine einen einem einer mein meine meinen unser unsere sein seine
    ihr ihre im auf unter bei mit für von vom zu zum zur nicht kein keine keinen auch noch jetzt
    schon immer falsch richtig korrekt ungültig gültig abgelaufen erforderlich nötig notwendig leer
    geheim sicher unsicher lang kurz gleich anders dasselbe derselbe dieselbe unbekannt bekannt hier
    dort da ja nein nur sehr privat öffentlich neu alt irgendwo ist sind war wird
    el la los las un una uno mi mis su sus nuestro nuestra tu tus en de del para por con sin no
    nunca también todavía ya ahora igual misma mismo diferente incorrecta incorrecto correcta
    correcto inválida inválido válida válido caducada caducado obligatoria obligatorio necesaria
    necesario vacía vacío segura seguro insegura inseguro larga largo corta corto secreta secreto
    desconocida desconocido aquí allí sí muy demasiado nueva nuevo vieja viejo privada pública es
    son era está
    le les l' une mon ma mes ton ta tes notre votre son sa ses leur leurs dans sur sous pour du
    des avec sans pas ne jamais aussi encore déjà toujours même différent différente incorrect
    incorrecte correct correcte invalide valide expiré expirée obligatoire nécessaire vide sécurisé
    sécurisée faible fort forte longue court courte secrète inconnu inconnue ici là oui non trop
    très nouveau nouvelle ancien ancienne privé privée public publique quelque part est sont était
    """
)
# "stored", "rotating", "gespeichert", "vierstellig", "guardada", "enregistré": a state, not a value.
_PARTICIPLE = re.compile(
    r"^(?:[a-z]+(?:ed|ing)|ge[a-zäöüß]+t|[a-zäöüß]+stellig|[a-záéíóúñ]+(?:ada|ado|ida|ido)s?|[a-zéèêàç]+ée?s?)$"
)
# "…", "<your key>", "your-api-key", "${TOKEN}", "xxxx", "****", "[redacted]", "password": stand-ins.
_PLACEHOLDER = re.compile(
    r"^(?:\.{2,}|…|<.*|\{.*|\[.*\]|\(.*\)|%\w+%|\$.*|your[-_ ].*|x{3,}|\*+|#+|-+|_+|placeholder|example\w*"
    r"|redacted|hidden|secret|dummy|todo|tbd|n/a|pass(?:word|wd)?|pwd|token|api[-_]?key)$",
    re.IGNORECASE,
)
# PASSWORD, DB_PASSWORD, OPENAI_API_KEY: the name of a variable that holds it, not the value.
_VARIABLE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{3,}$")
# os.environ['X'], get_secret(): a reference to a value kept elsewhere.
_REFERENCE = re.compile(r"^[\w.]+[\[(]")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+$|^v\d+$", re.IGNORECASE)
# "4 digits", "12 characters long", "6 Stellen", "8 caracteres", "4 chiffres": a length, not a value.
_UNITS = _words(
    """
    digit digits character characters char chars letter letters symbol symbols number numbers word
    words long stellen stellig zeichen ziffern buchstaben dígitos digitos caracteres letras números
    numeros chiffres caractères lettres mots
    """
)
# The grammar of a sentence about a passphrase, which a passphrase of random words lacks.
_FUNCTION_WORDS = _words(
    """
    a an the this that it its my your our their his her in on at for from to of by with as is are was
    be not no too very also still and or but if so than der die das ein eine ist im in auf mit für von
    zu und oder nicht el la los las un una es en de del con para por y o no le les une est dans sur
    avec pour et ou pas
    """
)
_CONJUNCTIONS = _words("and or but und oder aber y o pero et ou mais")
_WORD = re.compile(r"[^\s]+")
_CLAUSE_END = re.compile(r"[ \t]*(?:$|\n|[.,;!?)\]])")
_TRAILING = ".,;:?)]"
_ENDS = _TRAILING + _QUOTES + "\\"


def _password_like(value: str) -> bool:
    """A digit, a symbol (not a hyphen or apostrophe inside a word) or a capital inside the word."""
    if any(ch.isdigit() for ch in value):
        return True
    if any(not ch.isalnum() and ch not in "-'’" for ch in value):
        return True
    return any(a.islower() and b.isupper() for a, b in zip(value, value[1:], strict=False))


def _next_words(text: str, pos: int, count: int) -> list[str]:
    words: list[str] = []
    for match in _WORD.finditer(text, pos):
        words.append(match.group().strip(_TRAILING + "(").lower())
        if len(words) == count or "\n" in text[pos : match.start()]:
            break
    return words


def is_placeholder(value: str) -> bool:
    """A stand-in for a value: "<password>", "your-api-key", "${TOKEN}", "PASSWORD", "xxxx", "[redacted]"."""
    return bool(_PLACEHOLDER.match(value) or _VARIABLE.match(value))


def _not_a_value(value: str) -> bool:
    lowered = value.lower()
    return bool(
        lowered in _STOPWORDS
        or _PLACEHOLDER.match(value)
        or _VARIABLE.match(value)
        or _REFERENCE.match(value)
        or _VERSION.match(value)
        or (value.islower() and _PARTICIPLE.match(lowered))
    )


def _single_value(text: str, start: int, end: int) -> tuple[int, int] | None:
    value = text[start:end]
    if REDACTED in value:
        value = value[: value.index(REDACTED)]
        end = start + len(value)
    # Sentence punctuation after the value is not part of it: "my PIN is 1234."
    while value and value[-1] in _TRAILING and (end == len(text) or text[end].isspace() or text[end] in _ENDS):
        value, end = value[:-1], end - 1
    if not value or _not_a_value(value):
        return None
    if _UNITS & set(_next_words(text, end, 3)):
        return None
    if _password_like(value):
        return start, end
    # A plain word is a value only when the sentence says nothing more about it:
    # "the wifi password is sunshine." but not "the password is rotated every month".
    if _CLAUSE_END.match(text, end):
        return start, end
    following = _next_words(text, end, 1)
    if following and following[0] in _CONJUNCTIONS:
        return start, end
    return None


def _phrase_value(text: str, start: int) -> tuple[int, int] | None:
    """Every word up to the end of the clause: a passphrase or seed phrase is many words.

    Random words carry no grammar: a clause with an article, a preposition or a verb ("is stored in
    the vault", "too long and hard to type") describes the passphrase instead of saying it.
    """
    stop = re.compile(r"[.;\n]|,\s|$").search(text, start)
    end = min(stop.start() if stop else len(text), start + 400)
    while end > start and text[end - 1].isspace():
        end -= 1
    words = [word.strip(_TRAILING).lower() for word in text[start:end].split()]
    if len(words) <= 1:
        first = _WORD.match(text, start)
        return _single_value(text, start, first.end()) if first else None
    if _FUNCTION_WORDS.intersection(words) or _PARTICIPLE.match(words[0]):
        return None
    return start, end


def find_phrases(text: str) -> list[PhraseHit]:
    """Every secret value a sentence states, in order of position; overlapping hits are kept."""
    hits: list[PhraseHit] = []
    for what, phrase, pattern in _PATTERNS:
        position = 0
        while (match := pattern.search(text, position)) is not None:
            span: tuple[int, int] | None
            if match.group("qv") is not None:
                value = match.group("qv").strip()
                span = None if not value or is_placeholder(value) else match.span("qv")
                value_start = match.start("qv")
            else:
                value_start = match.start("v")
                span = _phrase_value(text, value_start) if phrase else _single_value(text, *match.span("v"))
            if span is not None:
                hits.append(PhraseHit(what, *span))
                position = max(span[1], match.start() + 1)
            else:
                # What was taken for the value may itself start the sentence that says one:
                # "PIN: PIN: 1234". Searching on from the value finds it, so redacting a text
                # twice changes nothing the first pass could have seen.
                position = max(value_start, match.start() + 1)
    hits.sort(key=lambda hit: (hit.start, -hit.end))
    return hits
