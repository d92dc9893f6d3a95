"""The exception tree, error-body parsing and status mapping (hermes_notebook/errors.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from hermes_notebook import errors
from hermes_notebook.errors import (
    HermesAuthError,
    HermesConflictError,
    HermesHTTPError,
    HermesNotFoundError,
    HermesRateLimitError,
    HermesServerError,
    HermesTooLargeError,
    HermesValidationError,
    error_for_status,
    parse_error_body,
    redact,
)

PACKAGE = Path(errors.__file__).parent


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(  # the 401 envelope has no "param" key (docs/protocol/api-server.md §1)
            '{"error":{"message":"Invalid API key","type":"invalid_request_error","code":"invalid_api_key"}}',
            ("Invalid API key", "invalid_request_error", "invalid_api_key", None),
            id="openai-envelope-without-param",
        ),
        pytest.param(
            '{"error":{"message":"Too many concurrent runs (max 1)","type":"rate_limit_error","param":null,'
            '"code":"rate_limit_exceeded"}}',
            ("Too many concurrent runs (max 1)", "rate_limit_error", "rate_limit_exceeded", None),
            id="openai-envelope-429",
        ),
        pytest.param(
            '{"error":{"message":"bad part","type":"invalid_request_error","param":"input[0].content",'
            '"code":"invalid_content_part"}}',
            ("bad part", "invalid_request_error", "invalid_content_part", "input[0].content"),
            id="openai-envelope-with-param",
        ),
        pytest.param(
            '{"error": "Job not found"}', ("Job not found", None, None, None), id="jobs-error-string"
        ),
        pytest.param('{"detail":"Unauthorized"}', ("Unauthorized", None, None, None), id="dashboard-detail"),
        pytest.param(
            '{"detail":[{"loc":["body","name"],"msg":"field required","type":"missing"}]}',
            ("name: field required", None, None, None),
            id="fastapi-validation-list",
        ),
        pytest.param("404: Not Found", ("404: Not Found", None, None, None), id="aiohttp-plain-404"),
        pytest.param(
            "405: Method Not Allowed", ("405: Method Not Allowed", None, None, None), id="plain-405"
        ),
        pytest.param(
            "500 Internal Server Error\n\nServer got itself in trouble",
            ("500 Internal Server Error Server got itself in trouble", None, None, None),
            id="plain-500",
        ),
        pytest.param("", (None, None, None, None), id="empty-body-cors-403"),
        pytest.param(
            "<html><body>Bad gateway</body></html>",
            ("non-JSON answer of 37 characters", None, None, None),
            id="html-page",
        ),
        pytest.param(
            '["not", "an", "object"]', ('["not", "an", "object"]', None, None, None), id="json-array"
        ),
    ],
)
def test_parse_error_body_reads_every_server_shape(body: str, expected: tuple[str | None, ...]) -> None:
    """parse_error_body returns (message, type, code, param) for each error shape Hermes 0.19.0 produces."""
    assert parse_error_body(body) == expected


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, HermesValidationError),
        (401, HermesAuthError),
        (403, HermesAuthError),
        (404, HermesNotFoundError),
        (409, HermesConflictError),
        (413, HermesTooLargeError),
        (422, HermesValidationError),
        (429, HermesRateLimitError),
        (500, HermesServerError),
        (502, HermesServerError),
        (503, HermesServerError),
        (418, HermesHTTPError),
    ],
)
def test_error_for_status_picks_the_class(status: int, cls: type[HermesHTTPError]) -> None:
    """Each HTTP status maps to its exception class, carrying status and endpoint."""
    error = error_for_status(status, '{"error": "nope"}', endpoint="GET /x")
    assert type(error) is cls and error.status == status and error.endpoint == "GET /x"
    assert str(error).startswith("GET /x ") and "nope" in str(error)


def test_jobs_500_becomes_validation_error_only_when_asked() -> None:
    """validation_on_500 turns the jobs API's 500 {"error"} into HermesValidationError (a ValueError)."""
    body = '{"error": "Invalid schedule \'@daily\'. Use: ..."}'
    assert type(error_for_status(500, body, endpoint="POST /api/jobs")) is HermesServerError
    error = error_for_status(500, body, endpoint="POST /api/jobs", validation_on_500=True)
    assert isinstance(error, HermesValidationError) and isinstance(error, ValueError)
    assert error.server_message == "Invalid schedule '@daily'. Use: ..."


def test_rate_limit_carries_retry_after() -> None:
    """A 429 parses Retry-After into seconds and says it in the message; a bad header gives None."""
    body = (
        '{"error":{"message":"Too many concurrent runs (max '
        '10)","type":"rate_limit_error","code":"rate_limit_exceeded"}}'
    )
    error = error_for_status(429, body, endpoint="POST /v1/runs", retry_after="1")
    assert isinstance(error, HermesRateLimitError) and error.retry_after == 1.0
    assert error.code == "rate_limit_exceeded" and "(retry after 1 s)" in str(error)
    assert error_for_status(429, body, endpoint="POST /v1/runs", retry_after="soon").retry_after is None


def test_auth_message_gives_advice_and_echoed_secrets_are_redacted() -> None:
    """A 401 message says to check the key, and a key echoed by a server is replaced by asterisks."""
    key = "sk-live-0123456789abcdef"
    error = error_for_status(401, f'{{"error": "bad key {key}"}}', endpoint="GET /v1/models", secrets=(key,))
    assert "Check the key" in str(error) and key not in str(error) and key not in repr(error)
    assert redact(f"Authorization: Bearer {key}") == "Authorization: Bearer ********"
    assert redact("ws://h/api/ws?token=abc123&x=1") == "ws://h/api/ws?token=********&x=1"
    assert redact("X-Hermes-Session-Token: abcdef") == "X-Hermes-Session-Token: ********"


def test_every_error_class_is_documented_and_drawn_in_the_tree() -> None:
    """Every class in errors.py has a "Raised when" docstring and appears in the module docstring's tree."""
    tree = ast.parse((PACKAGE / "errors.py").read_text())
    module_doc = ast.get_docstring(tree) or ""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert len(classes) >= 17
    for node in classes:
        doc = ast.get_docstring(node) or ""
        assert doc.startswith("Raised "), node.name
        assert re.search(rf"\b{node.name}\b", module_doc), node.name
        assert node.name in errors.__all__


def test_transport_exceptions_are_caught_only_in_the_client_package() -> None:
    """No module outside hermes_notebook/client/ catches httpx, httpx_sse or websockets exceptions."""
    pattern = re.compile(r"except\s*\(?\s*(httpx|httpx_sse|websockets)\b")
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        # _demo/ is the test harness (it probes servers while starting them), not part of the client stack
        if "client" not in path.relative_to(PACKAGE).parts[:1]
        and "_demo" not in path.parts
        and pattern.search(path.read_text())
    ]
    assert offenders == []
