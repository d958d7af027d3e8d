"""Every REST response checked against the OpenAPI document: its (path, method, status) must be
documented and its body must match the documented schema.

`hub_client` (tests/harness.py) hooks a `ResponseChecker` into every harness client, so each
`/api/v1` response the suite receives is checked; a mismatch fails the test that got it.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import orjson
from jsonschema import Draft202012Validator

API = "/api/v1"


class ResponseChecker:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.routes: list[tuple[re.Pattern[str], str, dict[str, Any]]] = []
        self._validators: dict[tuple[str, int, str], Draft202012Validator] = {}
        for path, methods in document["paths"].items():
            # A page path (`{path}`, Quart's path converter) spans segments; other parameters are one.
            spans = re.escape(path).replace(r"\{path\}", "(?:.+)")
            pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", spans) + "$")
            for method, op in methods.items():
                self.routes.append((pattern, method.upper(), op))

    def operation(self, method: str, path: str) -> dict[str, Any] | None:
        """The documented operation for a request, the literal path first (`/inbox/read-all`
        before `/inbox/{event_id}/...` cannot clash: segment counts differ, but be exact)."""
        found = [(p, op) for p, m, op in self.routes if m == method and p.match(path)]
        found.sort(key=lambda f: f[0].pattern.count("[^/]+"))
        return found[0][1] if found else None

    def mismatch(self, method: str, path: str, status: int, media: str, body: bytes) -> str | None:
        """What is wrong with the response, or None; requests to undocumented (path, method)
        pairs (a 405's wrong method, an unknown path) are not the document's business."""
        op = self.operation(method, path)
        if op is None:
            return None
        documented = op["responses"].get(str(status))
        if documented is None:
            return f"{method} {path}: status {status} is not documented (has {sorted(op['responses'])})"
        content = documented.get("content")
        if content is None:
            return None if not body else f"{method} {path} {status}: a body where none is documented"
        if media not in content:
            return f"{method} {path} {status}: content type {media!r} is not documented ({sorted(content)})"
        if media == "text/event-stream":
            return None
        validator = self._validators.get((op["operationId"], status, media))
        if validator is None:
            validator = Draft202012Validator(self._resolve(content[media]["schema"]))
            self._validators[(op["operationId"], status, media)] = validator
        instance = body.decode() if media.startswith("text/") else orjson.loads(body)  # /raw's text
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            return f"{method} {path} {status}: {first.message} at {list(first.path)}"
        return None

    def _resolve(self, node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                target: Any = self.document
                for key in ref.removeprefix("#/").split("/"):
                    target = target[key]
                return self._resolve(target)
            return {k: self._resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [self._resolve(v) for v in node]
        return node

    async def hook(self, response: httpx.Response) -> None:
        """An httpx response hook: check an /api/v1 response (a stream is checked by status only)."""
        request = response.request
        path = request.url.path
        if not path.startswith(API) or request.method == "HEAD":
            return
        media = response.headers.get("content-type", "").split(";", 1)[0].strip()
        body = b"" if media == "text/event-stream" else await response.aread()
        wrong = self.mismatch(request.method, path, response.status_code, media, body)
        if wrong is not None:
            raise AssertionError(f"response outside the OpenAPI document: {wrong}")
