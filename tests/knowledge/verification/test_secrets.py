"""Secrets a review wants to learn are found and redacted; look-alikes in ordinary notes are left alone.

Every secret case names the exact value that must be found (recall) and asserts that nothing else
in the sentence is (precision); every look-alike asserts that nothing at all is found.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.verification import secrets
from knowledge.verification.secrets import Finding

PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

# (what was said, the secret's value in it, what a person is told it is)
SECRETS: list[tuple[str, str, str]] = [
    # keys recognised by their shape
    (
        "Pasted their Stripe key sk_live_4eC39HqLyjWDarjtT1zdp7dc for the shop.",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "a Stripe API key",
    ),
    (
        "Restricted key rk_live_51HxYzAbCdEfGhIjKlMnOpQr7s8T9u0VwXyZ for reports",
        "rk_live_51HxYzAbCdEfGhIjKlMnOpQr7s8T9u0VwXyZ",
        "a Stripe API key",
    ),
    (
        "Saved the GitHub token ghp_16C7e42F292c6912E7710c838347Ae178B4a in the notes",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "a GitHub token",
    ),
    (
        "CI uses github_pat_11ABCDEFG0abcdefghijkl_MNOPQRSTUVWXyz0123456789abcdef to push",
        "github_pat_11ABCDEFG0abcdefghijkl_MNOPQRSTUVWXyz0123456789abcdef",
        "a GitHub token",
    ),
    (
        "Slack bot xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx posts the reports",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "a Slack token",
    ),
    ("Their AWS access key id is AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "an AWS access key"),
    (
        "OpenAI key sk-proj-4fG7hJ2kL9mN1pQ3rS5tU7vW9xY1zA3bC5dE for the bot",
        "sk-proj-4fG7hJ2kL9mN1pQ3rS5tU7vW9xY1zA3bC5dE",
        "an OpenAI API key",
    ),
    (
        "old key 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 still works",
        "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",
        "an OpenAI API key",
    ),
    (f"The session cookie is a JWT: {JWT}", JWT, "a JSON Web Token"),
    (f"Their deploy key:\n{PRIVATE_KEY}\nkeep it out of git", PRIVATE_KEY, "a private key"),
    ("DATABASE_URL=postgres://app:Tr0ub4dor@db.internal:5432/app", "Tr0ub4dor", "a password in a URL"),
    ("Cache at redis://:p4ssw0rd@cache.internal:6379/0", "p4ssw0rd", "a password in a URL"),
    (
        "GOOGLE_MAPS=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "a Google API key",
    ),
    # assignments written as code
    ('In settings.py: password = "s3cr3t!"', "s3cr3t!", "a password"),
    ('client = Client(api_key="Zx8kQ2mN4pL7vB1c")', "Zx8kQ2mN4pL7vB1c", "an API key"),
    ('secret = "kJ8#mQ2$vL9"', "kJ8#mQ2$vL9", "a secret"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "a secret key",
    ),
    # English sentences
    ("the wifi password is hunter2", "hunter2", "a password"),
    ("My WiFi password is sunshine.", "sunshine", "a password"),
    ("The password for the router is admin-4477, don't share it", "admin-4477", "a password"),
    ('The password is "open sesame 42"', "open sesame 42", "a password"),
    ("pin: 1234", "1234", "a PIN"),
    ("Their bank card PIN is 9876, keep it safe", "9876", "a PIN"),
    ("The passphrase is correct horse battery staple.", "correct horse battery staple", "a passphrase"),
    (
        "API key is 8f14e45fceea167a5a36dedd4bea2543 for the weather service",
        "8f14e45fceea167a5a36dedd4bea2543",
        "an API key",
    ),
    ("token: tk_9a8b7c6d5e4f3a2b1c0d", "tk_9a8b7c6d5e4f3a2b1c0d", "an access token"),
    ("wifi pw is hunter2", "hunter2", "a password"),
    ("The wifi is HomeNet-5G and the password is Tr0ub4dor&3kettle.", "Tr0ub4dor&3kettle", "a password"),
    ("export DB_PASSWORD=Kx9$mQ2!vL", "Kx9$mQ2!vL", "a password"),
    ("the alarm code is 4321", "4321", "an access code"),
    # German
    ("das Passwort ist Sommer2024!", "Sommer2024!", "a password"),
    ("Mein WLAN-Passwort lautet blaueHaus77.", "blaueHaus77", "a password"),
    ("Die PIN ist 4711", "4711", "a PIN"),
    # Spanish
    ("la contraseña es gato123", "gato123", "a password"),
    ("La clave del wifi es girasol.", "girasol", "a password"),
    ("mi PIN es 2580", "2580", "a PIN"),
    # French
    ("le mot de passe est soleil", "soleil", "a password"),
    ("Mon code PIN est 1357.", "1357", "a PIN"),
    ("la clé API est ak_7Hq2LmN9pX4rT8vW", "ak_7Hq2LmN9pX4rT8vW", "an API key"),
    ("mot de passe : Azerty123", "Azerty123", "a password"),
]

LOOK_ALIKES: list[str] = [
    "I prefer 2-space indentation",
    "uses 1Password for passwords",
    "rotates API keys monthly",
    "my password manager is Bitwarden",
    "set the PASSWORD env var in .env",
    "The database listens on port 5432",
    "Upgraded to Django 5.2.19 and Python 3.11.4",
    "commit 3f2a9c1 fixed it",
    "The fix landed in commit 3f2a9c1e5b7d9f0a2c4e6b8d0f1a3c5e7b9d1f3a.",
    'The reviewer reverted commit "3f2a9c1e5b" today',
    "Continue in chat 123e4567-e89b-12d3-a456-426614174000 tomorrow",
    "Docs: https://docs.djangoproject.com/en/5.2/ref/settings/#secret-key",
    "The dashboard is at http://localhost:8000/pending/?page=2",
    "Their server is 203.0.113.7",
    "The password is stored in 1Password.",
    "The PIN is 4 digits long.",
    "The API key is in the .env file.",
    "The API key is read from OPENAI_API_KEY.",
    "Their password must be at least 12 characters.",
    "The token is expired, ask for a new one.",
    "Password: see the team vault",
    "The key is patience.",
    "The secret to good bread is time.",
    "Pinned chats show first; pin the chat to keep it on top.",
    "password = os.environ['DB_PASSWORD']",
    "Her PIN code is required at checkout.",
    "Version v2.14.0 fixed the token refresh",
    "Tests check sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of an empty file",
    "api_key: <your key>",
    "OPENAI_API_KEY=your-api-key-here",
    "DATABASE_URL is postgres://user:password@host:5432/name",
    "Uses the passphrase only for SSH keys and it is stored in the keychain.",
    "The passphrase is stored in the keychain.",
    "Das Passwort ist falsch.",
    "Die PIN ist vierstellig.",
    "Das Passwort ist im Passwort-Manager gespeichert.",
    "La contraseña es incorrecta.",
    "La clave es practicar todos los días.",
    "Le mot de passe est enregistré dans Bitwarden.",
    "Le code est propre.",
    "Le jeton est expiré.",
    "the wifi password is [redacted]",
]


@pytest.mark.parametrize(("text", "value", "what"), SECRETS, ids=[case[0][:40] for case in SECRETS])
def test_each_secret_is_found_exactly_and_redacted(text: str, value: str, what: str) -> None:
    found = secrets.find_all(text)
    # Recall: the value is found, whole. Precision: nothing else in the sentence is.
    assert [(text[f.start : f.end], f.what) for f in found] == [(value, what)]
    assert secrets.find(text) == found[0]
    redacted = secrets.redact(text)
    assert redacted == text.replace(value, "[redacted]")
    assert value not in redacted
    # What was redacted is not found again, so redacting twice changes nothing.
    assert secrets.find(redacted) is None
    assert secrets.redact(redacted) == redacted


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_not_flagged(text: str) -> None:
    assert secrets.find_all(text) == []
    assert secrets.find(text) is None
    assert secrets.redact(text) == text


def test_the_tables_cover_enough_forms() -> None:
    assert len(SECRETS) >= 25 and len(LOOK_ALIKES) >= 25
    kinds = {what for _, _, what in SECRETS}
    assert len(kinds) >= 10


def test_several_secrets_on_several_lines_are_all_found_in_order() -> None:
    text = (
        "Notes from the call:\n"
        "- the wifi password is hunter2 and the alarm PIN is 4321\n"
        "- prefers dark mode\n"
        "- Stripe: sk_live_4eC39HqLyjWDarjtT1zdp7dc\n"
    )
    found = secrets.find_all(text)
    assert [text[f.start : f.end] for f in found] == ["hunter2", "4321", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"]
    assert [f.what for f in found] == ["a password", "a PIN", "a Stripe API key"]
    assert secrets.redact(text) == (
        "Notes from the call:\n"
        "- the wifi password is [redacted] and the alarm PIN is [redacted]\n"
        "- prefers dark mode\n"
        "- Stripe: [redacted]\n"
    )


def test_a_finding_is_a_frozen_value() -> None:
    finding = secrets.find("pin: 1234")
    assert finding == Finding(what="a PIN", start=5, end=9)
    with pytest.raises(AttributeError):
        finding.start = 0  # type: ignore[misc]


def test_redact_value_redacts_every_string_of_nested_json_arguments() -> None:
    arguments = json.loads(
        json.dumps(
            {
                "action": "add",
                "target": "memory",
                "content": "User's wifi password is hunter2; likes tea",
                "quotes": ["my PIN is 9876", "nothing secret here", {"said": "token: tk_9a8b7c6d5e4f3a2b1c0d"}],
                "meta": {"depth": {"key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "count": 3, "ok": True, "none": None}},
            }
        )
    )
    assert secrets.redact_value(arguments) == {
        "action": "add",
        "target": "memory",
        "content": "User's wifi password is [redacted]; likes tea",
        "quotes": ["my PIN is [redacted]", "nothing secret here", {"said": "token: [redacted]"}],
        "meta": {"depth": {"key": "[redacted]", "count": 3, "ok": True, "none": None}},
    }
    # The arguments the caller holds are not changed in place.
    assert arguments["content"] == "User's wifi password is hunter2; likes tea"


def test_redact_value_passes_other_values_unchanged() -> None:
    assert secrets.redact_value(42) == 42
    assert secrets.redact_value(None) is None
    assert secrets.redact_value(("pin: 1234", 2)) == ("pin: [redacted]", 2)


# Pieces of sentences that say, almost say, or follow a secret; joined in any order.
_PIECES = st.sampled_from(
    [
        "the ",
        "password ",
        "is ",
        "hunter2",
        " ",
        "\n",
        "pin: ",
        "1234",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        '"',
        "=",
        "postgres://a:b1@h",
        "[redacted]",
        "token",
        ".",
        "la contraseña es ",
        "gato",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_redacting_a_redacted_text_changes_nothing(text: str) -> None:
    redacted = secrets.redact(text)
    assert secrets.redact(redacted) == redacted
    for finding in secrets.find_all(text):
        assert finding.start < finding.end


def test_a_value_revealed_by_redacting_the_one_before_it_was_already_redacted() -> None:
    # Found by the property above: "PIN: PIN: 1234" hid the second PIN behind the first.
    assert secrets.redact("pin: pin: 1234") == "pin: pin: [redacted]"
    text = "la contraseña es .pin: pin: is "
    assert secrets.redact(secrets.redact(text)) == secrets.redact(text)


def test_a_verb_after_the_name_is_not_the_value() -> None:
    assert secrets.find("my PIN: is ") is None
    assert secrets.find("das Passwort: ist ") is None
