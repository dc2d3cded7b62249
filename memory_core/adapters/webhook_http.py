"""``WebhookTransport`` over the standard library's HTTP client: one POST, one deadline, no
redirects followed (a receiver that moved is a failure to fix, not a hop to take)."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any, Mapping


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class HttpTransport:
    def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> tuple[int | None, str | None]:
        request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
        try:
            with _OPENER.open(request, timeout=timeout_s) as response:
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code, f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            return None, f"{type(exc).__name__}: {reason}"
        return (status, None) if 200 <= status < 300 else (status, f"HTTP {status}")
