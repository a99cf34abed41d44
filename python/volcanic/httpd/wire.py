"""HTTP/1.1 on the wire for volcanic.httpd.server: a request head read from a
buffer, an answer written as bytes. Pure functions, no sockets.

What is accepted is what the API server sends: a request line `METHOD TARGET HTTP/1.1` (or
HTTP/1.0), header lines, an empty line, and a body of exactly Content-Length bytes. An
HTTP/0.9 line (`GET /path`, no version) or any other shape is a malformed request line; it
is refused as soon as the line is complete instead of waiting for headers it will never have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email.utils import formatdate
import http.client
import io
import re

# The end of a request head: a line end, then an empty line (bare LF is tolerated, as
# http.server does).
HEAD_END = re.compile(rb"\r?\n\r?\n")
REQUEST_LINE = re.compile(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\S+) (HTTP/\d+\.\d+)")
VERSIONS = ("HTTP/1.0", "HTTP/1.1")

REASONS = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 408: "Timeout", 411: "LengthRequired",
           413: "RequestEntityTooLarge", 415: "UnsupportedMediaType", 431: "RequestHeaderFieldsTooLarge",
           500: "InternalError", 505: "HTTPVersionNotSupported"}


class WireError(Exception):
    """A request the server answers itself with `code`, then closes the connection;
    `unread_body` when the client may still be sending a body that will not be read."""

    def __init__(self, code: int, message: str, unread_body: bool = False) -> None:
        super().__init__(message)
        self.code, self.unread_body = code, unread_body


@dataclass
class Head:
    """A request line and its headers; `length` is the body's Content-Length (0 without)."""
    method: str
    target: str
    version: str
    headers: http.client.HTTPMessage
    length: int

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def keep_alive(self) -> bool:
        connection = (self.headers.get("Connection") or "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


@dataclass
class Request:
    head: Head
    body: bytes


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    close: bool = False  # close the connection after this answer


def check_request_line(buffer: bytes | bytearray) -> None:
    """Raises WireError as soon as the buffer's first line is complete and not HTTP/1.x."""
    end = buffer.find(b"\n")
    if end < 0:
        return
    _parse_request_line(bytes(buffer[:end + 1]))


def _parse_request_line(raw: bytes) -> tuple[str, str, str]:
    line = raw.decode("latin-1").rstrip("\r\n")
    match = REQUEST_LINE.fullmatch(line)
    if match is None:
        shown = line if len(line) <= 80 else line[:80] + "..."
        raise WireError(400, f"malformed request line {shown!r}: expected 'METHOD PATH HTTP/1.1'")
    method, target, version = match.groups()
    if version not in VERSIONS:
        raise WireError(505, f"{version} is not supported: HTTP/1.1 and HTTP/1.0 are")
    return method, target, version


def head_end(buffer: bytes | bytearray) -> int:
    """Where the head ends in the buffer (the body's first byte), or -1 if it has not yet."""
    match = HEAD_END.search(buffer)
    return match.end() if match else -1


def parse_head(raw: bytes, max_body: int) -> Head:
    """The head (request line to empty line). Raises WireError for what is not served:
    malformed lines, too many or too long headers, a chunked body, a bad or too large length."""
    first, _, rest = raw.partition(b"\n")
    method, target, version = _parse_request_line(first + b"\n")
    try:
        headers = http.client.parse_headers(io.BytesIO(rest))
    except (http.client.HTTPException, http.client.LineTooLong) as e:
        raise WireError(431, f"the request headers are not accepted: {e}") from None
    if headers.get("Transfer-Encoding"):
        raise WireError(411, "a Content-Length is required (chunked bodies are not read)", unread_body=True)
    text = (headers.get("Content-Length") or "0").strip()
    if not (text.isascii() and text.isdigit()):
        raise WireError(400, f"invalid Content-Length {text!r}", unread_body=True)
    length = int(text)
    if length > max_body:
        raise WireError(413, f"the body is {length} bytes; at most {max_body} are accepted", unread_body=True)
    return Head(method, target, version, headers, length)


def encode(response: Response, server: str, method: str = "GET") -> bytes:
    """The status line, headers and body in one buffer (one write: with Nagle's algorithm and
    the client's delayed ACK, a head written apart from its body waits 40 ms)."""
    lines = [f"HTTP/1.1 {response.status} {http.client.responses.get(response.status, '')}",
             f"Server: {server}", f"Date: {formatdate(usegmt=True)}",
             f"Content-Type: {response.content_type}", f"Content-Length: {len(response.body)}"]
    lines += [f"{k}: {v}" for k, v in response.headers.items()]
    if response.close:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if method == "HEAD" else head + response.body
