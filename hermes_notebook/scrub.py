"""The one secret scrubber for every output path that is kept or sent on: exports, saved transcripts, the
widget stream, filled prompts, tool results.

Why one module: a secret must be removed the same way wherever text leaves the kernel (a saved notebook, a
file, the model). :func:`scrub` removes the given secret values (the connection's API key and Dashboard
token), bearer and token parameters, strings shaped like provider keys (``sk-``, ``ghp_``, ``hf_``,
``sk_live_``, ``AIza``, AWS ids, JWTs, PEM private keys), URL passwords (``postgresql://user:pw@host``) and
the values of secret-named assignments, quoted or not (``API_KEY=...``, ``password='...'``, ``'api_key':
'...'``, ``OpenAI(api_key="...")``). It runs on text before escaping, which could otherwise hide a secret's
shape from the patterns.

What it never touches: the text of something the user is asked to approve (an approval or Run card shows
exactly what runs; :mod:`hermes_notebook.widgets.stream_scrub` passes those through). Values are key
characters only (letters, digits and ``_-.+/=~!@#%^*``), so code is not mistaken for a key:
``token=exec(...)`` or ``api_key=os.environ["X"]`` stays as written. What it cannot catch: a secret with no
recognisable shape and no secret-looking name beside it (a bare password in prose), or one split by
whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import redact

__all__ = ["MASK", "holds_key", "image_data", "looks_secret", "scrub", "scrub_document", "scrub_value"]

#: What a removed secret becomes.
MASK = "********"

#: What a key, token or password is made of: a ``name=value`` value stops at anything else (quotes, brackets,
#: parentheses, ``$``, ``,``, ``;``, ``&``, ``:``, whitespace), and one followed by ``(`` or ``[`` is code.
KEY_CHARS = r"A-Za-z0-9_\-.+/=~!@#%^*"
_QUOTED = rf"(?:'(?P<v1>[{KEY_CHARS}]{{6,}})'|\"(?P<v2>[{KEY_CHARS}]{{6,}})\")"

# A name that says its value is secret: it ends in one of these words (token_count, secret_santa do not).
_SECRET_WORDS = (
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|private[_-]?key|access[_-]?key"
    r"|credentials?|auth)"
)
_ENV_WORDS = r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)"
_NAME = rf"(?:(?i:[A-Za-z0-9_.-]*{_SECRET_WORDS})|[A-Z][A-Z0-9_]*_{_ENV_WORDS})"
_SECRET_NAME = re.compile(_NAME)

# Strings shaped like a key: the whole match is removed (one alternation: one scan of the text).
_SHAPES = re.compile(
    "|".join(
        [
            # PEM private key blocks
            r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY-----|\Z)",
            r"(?<![A-Za-z0-9_-])(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}",  # OpenAI/Anthropic-style API keys
            r"\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
            r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}",  # GitHub tokens
            r"\bglpat-[A-Za-z0-9_-]{20,}",  # GitLab
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-\d+-[A-Za-z0-9-]{10,}",  # Slack tokens
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bhf_[A-Za-z0-9]{20,}",  # Hugging Face
            r"\bAIza[0-9A-Za-z_-]{30,}",  # Google API keys
            r"\bnpm_[A-Za-z0-9]{30,}|\bpypi-[A-Za-z0-9_-]{50,}",  # npm, PyPI
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)?",  # JWTs
        ]
    )
)
# Text every shape above starts with: the pattern runs only on text holding one (most text holds none).
_SHAPE_STARTS = (
    "-----BEGIN",
    "sk-",
    "pk-",
    "rk-",
    "sk_",
    "pk_",
    "rk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "xapp-",
    "AKIA",
    "ASIA",
    "hf_",
    "AIza",
    "npm_",
    "pypi-",
    "eyJ",
)
# URL passwords: scheme://user:PASSWORD@host (a DSN, a git remote).
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<v>[^/\s@]+)(?=@)")
# ``name = value`` / ``name: value`` / ``'name': 'value'`` / ``name="value"``: masked when the name looks
# secret (checked in Python: one cheap pattern for every assignment, not one pattern per secret word).
_ASSIGN = re.compile(
    rf"(?P<q>['\"]?)(?<![\w.-])(?P<n>[A-Za-z0-9_.-]+)(?P=q)\s*[=:]\s*"
    rf"(?:{_QUOTED}|(?P<v>[{KEY_CHARS}]{{6,}})(?![{KEY_CHARS}(\[]))"
)


def _mask(match: re.Match[str]) -> str:
    """The match with its value replaced by :data:`MASK`; an assignment only when its name looks secret."""
    groups = match.groupdict()
    if groups.get("n") is not None and not looks_secret(groups["n"]):
        return match.group(0)
    name = next(g for g in ("v", "v1", "v2") if groups.get(g) is not None)
    start, end = match.span(name)
    whole = match.group(0)
    return whole[: start - match.start()] + MASK + whole[end - match.start() :]


def scrub(text: str, secrets: Sequence[object] = ()) -> str:
    """``text`` without the given secret values, bearer/token parameters or anything shaped like a key."""
    text = redact(text, *secrets)
    if any(start in text for start in _SHAPE_STARTS):
        text = _SHAPES.sub(MASK, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(_mask, text)
    if "=" in text or ":" in text:
        text = _ASSIGN.sub(_mask, text)
    return text


def holds_key(text: str, secrets: Sequence[object] = ()) -> bool:
    """True when ``text`` holds one of ``secrets`` or a key-shaped literal (a provider key, a JWT, a private
    key, a URL password, a quoted secret-named value). Code is refused on a Run card for this, before anyone
    is asked."""
    for secret in secrets:
        value = secret.reveal() if hasattr(secret, "reveal") else secret
        if isinstance(value, str) and len(value) >= 4 and value in text:
            return True
    if _SHAPES.search(text) or _URL_PASSWORD.search(text):
        return True
    return any(
        m.group("n") and looks_secret(m.group("n")) and (m.group("v1") or m.group("v2"))
        for m in _ASSIGN.finditer(text)
    )


def looks_secret(name: object) -> bool:
    """True when a variable's name or a mapping's key says its value is secret (``db_password``, ``API_KEY``,
    ``'token'``): a summary then withholds the value."""
    return isinstance(name, str) and _SECRET_NAME.fullmatch(name) is not None


# The base64 of an image we show (a part's ``images``/``sent_images``): PNG, JPEG, GIF or WebP by its first
# bytes.
_IMAGE_RUN = r"(?:iVBORw0KGgo|/9j/|R0lGOD|UklGR)[A-Za-z0-9+/]*={0,2}"
_IMAGE_BASE64 = re.compile(_IMAGE_RUN + r"\Z")
# An embedded raster image in a rendered document (an export with ``images=True``).
_IMAGE_DATA_URL = re.compile(r"(data:image/(?:png|jpeg|gif|webp);base64,)(" + _IMAGE_RUN + ")")


def image_data(value: Mapping[Any, Any]) -> bool:
    """True for an image's ``{"mime": "image/...", "data": <base64 of a raster image>}``: its data is bytes,
    not text, and is never scrubbed (a key shape can occur in base64 by chance, and masking it would break the
    image)."""
    mime, data = value.get("mime"), value.get("data")
    return (
        isinstance(mime, str)
        and mime.startswith("image/")
        and isinstance(data, str)
        and _IMAGE_BASE64.match(data) is not None
    )


def scrub_document(text: str, secrets: Sequence[object] = ()) -> str:
    """:func:`scrub` over a rendered document that may embed images as ``data:image/...;base64,`` URLs: their
    base64 is kept as it is (bytes, not text; :func:`image_data`), everything around it is scrubbed."""
    if ";base64," not in text:
        return scrub(text, secrets)
    kept: list[str] = []

    def stash(match: re.Match[str]) -> str:
        kept.append(match.group(2))
        return f"{match.group(1)}\x00{len(kept) - 1}\x00"

    scrubbed = scrub(_IMAGE_DATA_URL.sub(stash, text.replace("\x00", "")), secrets)
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], scrubbed)


def scrub_value(value: Any, secrets: Sequence[object] = ()) -> Any:
    """``value`` with :func:`scrub` applied to every string in it (dicts and lists rebuilt, the rest kept); an
    image's base64 (:func:`image_data`) is kept as it is, its other fields (alt text, path) are scrubbed."""
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, Mapping):
        keep = image_data(value)
        return {
            key: item if keep and key == "data" else scrub_value(item, secrets) for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [scrub_value(item, secrets) for item in value]
    return value
