"""The Kubernetes grammars, defined once: annotated types used by the specs (what a user types) and by the
chart values models (whose JSON schema becomes each chart's ``values.schema.json``). These are the only
regular expressions of the package.

Each type validates with a readable message (the CLI prefixes the flag) and carries its JSON schema, so a
value the spec accepts is one the chart schema accepts too. Where the spec checks more than a JSON schema
can say (the two length limits of a label key), the spec is the stricter side.

``GRAMMARS`` maps a definition name to its JSON schema; a type's schema carries that name as its ``title``,
so the schema generator can share it as one definition under ``$defs``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_RX = rf"^{_LABEL}$"
DNS1035_LABEL_RX = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
DNS1123_SUBDOMAIN_RX = rf"^{_LABEL}(\.{_LABEL})*$"
_QUALIFIED = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
LABEL_KEY_RX = rf"^({_LABEL}(\.{_LABEL})*/)?{_QUALIFIED}$"
LABEL_VALUE_RX = rf"^({_QUALIFIED})?$"
QUANTITY_RX = r"^([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][0-9]+|[numkMGTPE]|[KMGTPE]i)?$"
ENV_NAME_RX = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"
CONFIG_KEY_RX = r"^[-._a-zA-Z0-9]+$"  # a key of a Secret or ConfigMap (apimachinery IsConfigMapKey)
ABS_PATH_RX = r"^/[^:\n]*$"
GIT_URL_RX = r"^(https?://|ssh://|git@|git://|file://)\S+$"
# an rsync source: rsync://HOST/PATH, HOST::MODULE/PATH or [USER@]HOST:PATH (the sync source of --sync-mode rsync)
RSYNC_SOURCE_RX = r"^(rsync://\S+|[^\s:/]+::\S*|[^\s:/]+:\S+)$"
# an image reference, as distribution/reference's ReferenceRegexp (regexp.go): [domain[:port]/]path[:tag][@digest],
# the path in lowercase (an uppercase first segment without '.' or ':' is a registry host, as docker reads it)
_IMG_PATH = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_IMG_DOMAIN = (r"(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*"
               r"[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?")
_IMG_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
IMAGE_TAG_RX = rf"^{_IMG_TAG}$"  # distribution/reference's tag (a runtime's version)
IMAGE_RX = (rf"^(?:{_IMG_DOMAIN}/)?{_IMG_PATH}(?:/{_IMG_PATH})*(?::{_IMG_TAG})?"
            r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$")
IMAGE_NAME_MAX = 255  # distribution/reference NameTotalLengthMax: the name without tag and digest
# Go's time.ParseDuration (Arena's duration flags, kubectl's --since): decimal numbers, each with a unit
DURATION_RX = r"^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$"
# Not Kubernetes grammars, but grammars the charts check: one path segment (git-sync's --link), a
# positive decimal integer written as text (torchrun --nproc-per-node), the start of a URL (TensorBoard's
# --logdir) and a URL that carries credentials (refused in a git-sync repository).
FILE_NAME_RX = r"^[^/]+$"
POSITIVE_INT_TEXT_RX = r"^[1-9][0-9]*$"
URL_SCHEME_RX = r"^[a-z][a-z0-9+.-]*://"
URL_CREDENTIALS_RX = r"^[A-Za-z][-+.A-Za-z0-9]*://[^/@:]*:[^/@]*@"

# A port's name (apimachinery validation.IsValidPortName, an IANA_SVC_NAME): at most 15 a-z, 0-9 and '-', at
# least one letter, not starting or ending with '-', no '--'.
PORT_NAME_RX = r"^(?=.{1,15}$)(?=.*[a-z])(?!.*--)[a-z0-9]([-a-z0-9]*[a-z0-9])?$"

_compiled: dict[str, re.Pattern[str]] = {}


def is_port_number(text: str) -> bool:
    """A port number written as text: 1-65535 (validation.IsValidPortNum)."""
    return text.isdigit() and 1 <= int(text) <= 65535


def matches(rx: str, value: str) -> bool:
    pattern = _compiled.get(rx)
    if pattern is None:
        pattern = _compiled[rx] = re.compile(rx)
    # a whole value: '$' alone would also take a final newline (re.match), which no Kubernetes grammar allows
    return (pattern.fullmatch(value) if rx.endswith("$") else pattern.match(value)) is not None


# ---- checks (plain functions: the specs call some of them directly) ---------------------------------
def _w(what: str) -> str:
    return f"{what} " if what else ""


def _checker(rx: str, max_length: int | None, problem: str, default_what: str = ""):
    """A check of one grammar: ``check(v, what)`` returns ``v`` or raises ``<what> 'v' <problem>``."""

    def check(v: Any, what: str = default_what) -> str:
        if not isinstance(v, str) or (max_length is not None and len(v) > max_length) or not matches(rx, v):
            raise ValueError(f"{_w(what)}{v!r} {problem}")
        return v

    return check


check_dns_label = _checker(DNS1123_LABEL_RX, 63, "must be a lowercase DNS label (a-z, 0-9, '-'; at most 63 characters)")
check_dns1035 = _checker(DNS1035_LABEL_RX, 63,
                         "must start with a lowercase letter and hold only a-z, 0-9 and '-' (not ending in '-')")
check_subdomain = _checker(DNS1123_SUBDOMAIN_RX, 253,
                           "must be a lowercase DNS subdomain (a-z, 0-9, '-', '.'; e.g. training-data)")
# a Kueue LocalQueue name: an object name (DNS subdomain) that also fits a label value (63)
check_queue_name = _checker(DNS1123_SUBDOMAIN_RX, 63,
                            "must be a LocalQueue name: lowercase a-z, 0-9, '-', '.'; at most 63 characters")
check_label_value = _checker(LABEL_VALUE_RX, 63, "must be at most 63 letters, digits, '-', '_', '.', starting and "
                             "ending with a letter or digit", "label value")
check_env_name = _checker(ENV_NAME_RX, None, "must match [-._a-zA-Z][-._a-zA-Z0-9]*", "environment variable name")
_check_config_key = _checker(CONFIG_KEY_RX, 253, "must be a Secret or ConfigMap key: letters, digits, '-', '_' "
                             "and '.' (at most 253)", "key")


def check_config_key(v: Any, what: str = "key") -> str:
    """A key of a Secret or ConfigMap; not ``.``, ``..`` or ``..``-prefixed (IsConfigMapKey; the schema's
    pattern cannot say that without a lookahead, so the spec is the stricter side)."""
    _check_config_key(v, what)
    if v == "." or v.startswith(".."):
        raise ValueError(f"{_w(what)}{v!r} must not be '.', '..' or start with '..'")
    return v


def check_no_credentials(v: Any, what: str = "", fix: str = "give the credentials in a Secret") -> Any:
    """A URL with a password in it (``user:password@``) is refused: it would be written in clear into the release
    values and the objects. The message shows the URL without them."""
    if isinstance(v, str) and matches(URL_CREDENTIALS_RX, v):
        scheme, _, rest = v.partition("://")
        raise ValueError(f"{_w(what)}{scheme}://***@{rest.partition('@')[2]} carries a password (user:password@), "
                         f"which would be written in clear: {fix}")
    return v


def url_shown(url: str) -> str:
    """A URL as a message may show it: scheme and host[:port] only (its user, path and query may be secrets)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(the URL given)"
    if not parts.scheme or not host:
        return "(the URL given)"
    return f"{parts.scheme}://{host}{port}/..." if (parts.path not in ("", "/") or parts.query) else \
        f"{parts.scheme}://{host}{port}"


def check_http_url(url: str, flag: str, example: str) -> str:
    """The http(s) URL a flag gives arena-helm itself to call (a webhook, Prometheus): a scheme, a host, a port in
    range and no ``user:password@`` (sent by nobody: the standard library's client does not); else a UsageError
    naming the flag, that shows the URL by ``url_shown`` only."""
    from urllib.parse import urlsplit

    from .errors import UsageError

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        raise UsageError(f"{flag} {url_shown(url)}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise UsageError(f"{flag} {url_shown(url)}: give an http:// or https:// URL with a host (e.g. {example})")
    if "@" in parts.netloc:
        raise UsageError(f"{flag} {url_shown(url)}: the URL carries a user or password (user:password@), which is "
                         f"never sent: give a URL whose path or query holds its token, or none")
    return url


def check_sync_source(v: Any, what: str = "") -> str:
    check_no_credentials(v, what, "give them in a Secret with keys username and password (--sync-secret)")
    return _check_sync_source(v, what)


_check_sync_source = _checker(f"({GIT_URL_RX})|({RSYNC_SOURCE_RX})", None,
                             "is not a git URL (https://, ssh://, git@host:path, git:// or file://) or an rsync "
                             "source (rsync://HOST/PATH, HOST::MODULE/PATH, HOST:PATH)")
check_rsync_source = _checker(RSYNC_SOURCE_RX, None, "is not an rsync source (rsync://HOST/PATH, HOST::MODULE/PATH "
                              "or [USER@]HOST:PATH)")
check_git_url = _checker(GIT_URL_RX, None, "is not a git URL (https://, ssh://, git@host:path, git:// or file://)")
_check_image = _checker(IMAGE_RX, None, "is not an image reference [REGISTRY[:PORT]/]REPOSITORY[:TAG][@DIGEST] with "
                        "a lowercase repository and a tag of letters, digits, '_', '.', '-' (e.g. pytorch/pytorch:2.3.0)")


def check_image(v: Any, what: str = "") -> str:
    _check_image(v, what)
    name = v.partition("@")[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name = name[:colon]
    if len(name) > IMAGE_NAME_MAX:
        raise ValueError(f"{_w(what)}{v!r}: the image name is over {IMAGE_NAME_MAX} characters")
    return v


def check_label_key(v: str, what: str = "label") -> str:
    if not isinstance(v, str):
        raise ValueError(f"{what} key {v!r} must be text")
    prefix, _, name = v.rpartition("/")
    if prefix and (len(prefix) > 253 or not matches(DNS1123_SUBDOMAIN_RX, prefix)):
        raise ValueError(f"{what} key {v!r}: prefix {prefix!r} must be a lowercase DNS subdomain")
    if not name or len(name) > 63 or not matches(LABEL_KEY_RX, name):
        raise ValueError(
            f"{what} key {v!r}: name must be 1-63 characters of letters, digits, '-', '_', '.', "
            "starting and ending with a letter or digit"
        )
    return v


def check_quantity(v: Any, what: str = "quantity") -> str:
    """``4``, ``0.5``, ``500m``, ``16Gi``, ``1e3``; a YAML number is taken as its text."""
    if isinstance(v, bool) or not isinstance(v, str | int | float):
        raise ValueError(f"{_w(what)}{v!r} must be a quantity such as 2, 500m or 16Gi")
    text = v if isinstance(v, str) else (str(int(v)) if float(v).is_integer() else repr(float(v)))
    if not matches(QUANTITY_RX, text):
        raise ValueError(f"{v!r} is not a valid {what} (e.g. 2, 0.5, 500m, 512Mi, 16Gi)")
    return text


def check_abs_path(v: str, what: str = "") -> str:
    if not isinstance(v, str) or not matches(ABS_PATH_RX, v):
        raise ValueError(f"{_w(what)}{v!r} must be absolute (start with /) and hold no ':' or newline")
    return v.rstrip("/") or "/"


check_file_name = _checker(FILE_NAME_RX, None, "must be one path segment (no '/')", "name")
check_positive_int_text = _checker(POSITIVE_INT_TEXT_RX, None, 'must be a positive integer written as text, e.g. "4"',
                                   "number")


_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNIT = {"ns": "1e-9", "us": "1e-6", "µs": "1e-6", "μs": "1e-6", "ms": "1e-3", "s": "1", "m": "60",
                  "h": "3600"}
DURATION_HINT = "use a Go duration, e.g. 90s, 10m, 1.5h or 2h30m"


def parse_duration(value: Any) -> int:
    """A Go duration (``90s``, ``10m``, ``1.5h``, ``2h30m``, ``0``; Arena's flags are time.Duration) -> whole
    seconds, truncated as Arena's ``int64(d.Seconds())``. A number without a unit is refused, as Go refuses it;
    from Python (or a defaults file) an int is seconds."""
    from decimal import Decimal

    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration: {DURATION_HINT}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value!r}: a duration cannot be negative")
        return value
    text = str(value).strip()
    if text.startswith("-"):
        raise ValueError(f"{value!r} is not a duration: a duration cannot be negative ({DURATION_HINT})")
    body = text[1:] if text.startswith("+") else text
    if body == "0":
        return 0
    if body.replace(".", "", 1).isdigit():
        raise ValueError(f"{value!r} is not a duration: it has no unit ({DURATION_HINT})")
    if not body or not matches(DURATION_RX, body):
        raise ValueError(f"{value!r} is not a duration: {DURATION_HINT}")
    total = sum(Decimal(n) * Decimal(_DURATION_UNIT[u]) for n, u in _DURATION_PART.findall(body))
    if 0 < total < 1:  # carried as whole seconds: it would be 0, which means "none" or "never" where 0 means anything
        raise ValueError(f"{value!r} is under one second: give 1s or more (or 0)")
    return int(total)


# ---- the annotated types ------------------------------------------------------------------------------
GRAMMARS: dict[str, dict[str, Any]] = {
    "dnsLabel": {"type": "string", "pattern": DNS1123_LABEL_RX, "maxLength": 63,
                 "description": "A DNS-1123 label: a-z, 0-9 and '-', starting and ending with a letter or digit."},
    "dns1035Label": {"type": "string", "pattern": DNS1035_LABEL_RX, "maxLength": 63,
                     "description": "A DNS-1035 label: like a DNS label, starting with a letter."},
    "dnsSubdomain": {"type": "string", "pattern": DNS1123_SUBDOMAIN_RX, "maxLength": 253,
                     "description": "A DNS-1123 subdomain: DNS labels joined by '.'."},
    "queueName": {"type": "string", "pattern": DNS1123_SUBDOMAIN_RX, "maxLength": 63,
                  "description": "A Kueue LocalQueue name (a DNS subdomain of at most 63 characters)."},
    "labelKey": {"type": "string", "pattern": LABEL_KEY_RX, "maxLength": 317,
                 "description": "A label or annotation key: [DNS subdomain/]name."},
    "labelValue": {"type": "string", "pattern": LABEL_VALUE_RX, "maxLength": 63,
                   "description": "A label value: at most 63 letters, digits, '-', '_' and '.'."},
    "quantity": {"type": ["string", "number"], "pattern": QUANTITY_RX, "minimum": 0,
                 "description": "A Kubernetes quantity, e.g. 2, 0.5, 500m, 16Gi."},
    "envName": {"type": "string", "pattern": ENV_NAME_RX, "description": "An environment variable name."},
    "configKey": {"type": "string", "pattern": CONFIG_KEY_RX, "maxLength": 253,
                  "description": "A key of a Secret or ConfigMap: letters, digits, '-', '_' and '.'."},
    "absPath": {"type": "string", "pattern": ABS_PATH_RX, "description": "An absolute path without ':'."},
    "gitUrl": {"type": "string", "pattern": GIT_URL_RX, "description": "A git repository URL."},
    "syncSource": {"type": "string", "pattern": f"({GIT_URL_RX})|({RSYNC_SOURCE_RX})",
                   "description": "A git repository URL or an rsync source (rsync://HOST/PATH, HOST::MODULE/PATH, "
                   "[USER@]HOST:PATH)."},
    "image": {"type": "string", "pattern": IMAGE_RX,
              "description": "A container image reference: [REGISTRY[:PORT]/]REPOSITORY[:TAG][@DIGEST]."},
    "fileName": {"type": "string", "pattern": FILE_NAME_RX, "description": "One path segment: no '/'."},
    "positiveIntText": {"type": "string", "pattern": POSITIVE_INT_TEXT_RX,
                        "description": "A positive integer written as text, e.g. \"4\"."},
}


def _type(base: type, check, name: str) -> Any:
    # inlined, titled with the grammar's name: the schema generator hoists them into $defs
    return Annotated[base, BeforeValidator(check), WithJsonSchema({"title": name, **GRAMMARS[name]})]


DNSLabel = _type(str, check_dns_label, "dnsLabel")
DNS1035Label = _type(str, check_dns1035, "dns1035Label")
DNSSubdomain = _type(str, check_subdomain, "dnsSubdomain")
QueueName = _type(str, check_queue_name, "queueName")
LabelKey = _type(str, check_label_key, "labelKey")
LabelValue = _type(str, check_label_value, "labelValue")
Quantity = _type(str, check_quantity, "quantity")
EnvName = _type(str, check_env_name, "envName")
ConfigKey = _type(str, check_config_key, "configKey")
AbsPath = _type(str, check_abs_path, "absPath")
GitURL = _type(str, check_git_url, "gitUrl")
SyncSource = _type(str, check_sync_source, "syncSource")
Image = _type(str, check_image, "image")
FileName = _type(str, check_file_name, "fileName")
PositiveIntText = _type(str, check_positive_int_text, "positiveIntText")
# A duration typed as 30s/10m/1h30m, or seconds: an int of seconds (the values carry seconds).
Duration = Annotated[int, BeforeValidator(parse_duration), WithJsonSchema({"type": "integer", "minimum": 0})]


def check_deadline(seconds: int) -> int:
    """A deadline (a Job's or a job's activeDeadlineSeconds) is positive: the API server refuses 0 (batch/v1
    validation, ValidateJobSpec); no deadline is no flag."""
    if seconds < 1:
        raise ValueError(f"{seconds}s: give 1s or more, or leave it out for no limit")
    return seconds


# A deadline: a Duration of one second or more.
Deadline = Annotated[Duration, AfterValidator(check_deadline), WithJsonSchema({"type": "integer", "minimum": 1})]


# apimachinery's quantity grammar (pkg/api/resource/quantity.go): a signed number, then a binary-SI suffix
# (Ki..Ei), a decimal exponent (e/E and a signed integer) or a decimal-SI suffix (n u m "" k M G T P E).
_PARSE_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([KMGTPE]i)|[eE]([+-]?[0-9]+)|([numkMGTPE]?))")
_BINARY_SI = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def parse_quantity(value: Any):
    """A quantity (``250m``, ``16Gi``, ``1e3``, ``123456789n``, or a number) as a Decimal, by Kubernetes'
    grammar; None for anything else. No kubernetes client import: ``--dry-run`` parses quantities too."""
    from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation

    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        try:
            out = Decimal(value)
        except (InvalidOperation, ValueError):
            return None
        return out if out.is_finite() else None
    if not isinstance(value, str):
        return None
    m = _PARSE_QUANTITY.fullmatch(value.strip())
    if m is None:
        return None
    number, binary, exponent, decimal = m.groups()
    n = Decimal(number)
    if binary is not None:
        return n * (1024 ** _BINARY_SI[binary])
    # an exponent past the default context's range (".0E3000000" is 0, as the grammar allows) stays exact
    wide = Context(prec=max(28, len(number)), Emax=MAX_EMAX, Emin=MIN_EMIN)
    return n.scaleb(int(exponent) if exponent is not None else _DECIMAL_SI[decimal], context=wide)


def quantity_float(value: Any) -> float:
    """A quantity as a float, for sums and ratios: 0.0 for an empty value and for one that is not a quantity (a
    metrics sample that is not one counts as no usage; what the API server stores it has validated)."""
    parsed = parse_quantity(value)
    return float(parsed) if parsed is not None else 0.0


# ---- times ---------------------------------------------------------------------------------------------
def parse_time(value: Any) -> dt.datetime | None:
    """An RFC 3339 time as the API server and helm write it (``2026-01-02T15:04:05Z``, with sub-seconds or an
    offset) -> an aware datetime; None for an empty value; ValueError for text that is not one."""
    if not value:
        return None
    stamp = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        raise ValueError(f"{value!r} has no time zone (RFC 3339 ends with Z or an offset)")
    return stamp


def epoch(value: Any, default: float = 0.0) -> float:
    """An RFC 3339 time as seconds since the epoch; ``default`` for an empty or malformed one."""
    try:
        stamp = parse_time(value)
    except ValueError:
        return default
    return stamp.timestamp() if stamp is not None else default
