"""Typed errors. Every refusal carries an HTTP-like status, a stable code and a clear message.

A message never names another owner's row or value: it speaks only of what the caller sent.
"""

from __future__ import annotations


class MemcoreError(Exception):
    """Base of every error the library raises on purpose."""

    status: int = 400
    code: str = "BAD_REQUEST"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, object]:
        body: dict[str, object] = {"code": self.code, "status": self.status, "message": self.message}
        if self.details:
            body["details"] = {k: v for k, v in self.details.items()}
        return body


class InvalidInput(MemcoreError):
    status = 422
    code = "INVALID_INPUT"


class EmptyKey(InvalidInput):
    code = "EMPTY_KEY"


class NotSerializable(InvalidInput):
    code = "VALUE_NOT_JSON"


class MalformedTimestamp(InvalidInput):
    code = "MALFORMED_TIMESTAMP"


class NaiveDatetime(InvalidInput):
    code = "NAIVE_DATETIME"


class InvalidInterval(InvalidInput):
    code = "INVALID_INTERVAL"


class UnknownScope(InvalidInput):
    code = "UNKNOWN_SCOPE"


class UnknownKind(InvalidInput):
    code = "UNKNOWN_KIND"


class IdentityIncomplete(InvalidInput):
    """The run identity lacks the part a scope needs (a user id for scope user, ...)."""

    code = "IDENTITY_INCOMPLETE"


class NotUtf8(InvalidInput):
    """Text that UTF-8 cannot encode (a lone surrogate such as '\\ud800'): no store could keep it."""

    code = "NOT_UTF8"


class ValueTooDeep(InvalidInput):
    code = "VALUE_TOO_DEEP"


class ValueTooLarge(InvalidInput):
    code = "VALUE_TOO_LARGE"


class UnknownOption(InvalidInput):
    """An option the op does not have: named, with the ones it has (never silently ignored)."""

    code = "UNKNOWN_OPTION"


class InternalError(MemcoreError):
    """A failure the library did not foresee, as a face (CLI, HTTP) reports it: never a traceback."""

    status = 500
    code = "INTERNAL"


class ScopeForbidden(MemcoreError):
    status = 403
    code = "SCOPE_FORBIDDEN"


class NotFound(MemcoreError):
    status = 404
    code = "NOT_FOUND"


class HomeNotFound(NotFound):
    code = "HOME_NOT_FOUND"


class NothingToRestore(MemcoreError):
    status = 409
    code = "NOTHING_TO_RESTORE"


class SchemaOutdated(MemcoreError):
    """A home written by an older build, opened read-only: it can only be migrated by a writer."""

    status = 409
    code = "SCHEMA_OUTDATED"


class StoreCorrupted(MemcoreError):
    """The store holds something its own invariants forbid (a schema from the future, ...)."""

    status = 500
    code = "STORE_CORRUPTED"


class HomeBusy(MemcoreError):
    """Another process (or this one, in another mode) holds the home's store: DuckDB admits one writer."""

    status = 423
    code = "HOME_BUSY"


class HomeUnusable(MemcoreError):
    """The home cannot be opened at all: not a folder, no permission, an I/O failure."""

    status = 409
    code = "HOME_UNUSABLE"


class AdminRequired(ScopeForbidden):
    code = "ADMIN_REQUIRED"


class CharLimitExceeded(InvalidInput):
    code = "CHAR_LIMIT_EXCEEDED"


class Blacklisted(InvalidInput):
    code = "BLACKLISTED"


class UnsafePattern(InvalidInput):
    """A blacklist pattern RE2 cannot compile (backreferences, lookaround, ...): refused when configured."""

    code = "UNSAFE_PATTERN"


class BlacklistUnusable(MemcoreError):
    """A stored blacklist pattern (from an older build) RE2 cannot compile: writes are refused until an
    admin configures the blacklist again, rather than skip the guard or backtrack."""

    status = 409
    code = "BLACKLIST_UNUSABLE"


class SourceClassRefused(InvalidInput):
    """A caller asked for a source class it may not claim (only downgrades are allowed)."""

    code = "SOURCE_CLASS_REFUSED"


class Locked(MemcoreError):
    status = 423
    code = "LOCKED"


class PinnedConflict(MemcoreError):
    status = 409
    code = "PINNED_CONFLICT"


class PreconditionFailed(MemcoreError):
    status = 409
    code = "PRECONDITION_FAILED"


class KeyHoldsFact(MemcoreError):
    """A proposal may not land on a key that holds an established fact."""

    status = 409
    code = "KEY_HOLDS_FACT"


class LiveHead(MemcoreError):
    """redact refuses the live head of a key: delete it first."""

    status = 409
    code = "LIVE_HEAD"


class InvalidSnapshot(InvalidInput):
    code = "INVALID_SNAPSHOT"


class WrongState(MemcoreError):
    """A lifecycle op that does not apply to the key's current state (promote an established fact, ...)."""

    status = 409
    code = "WRONG_STATE"


class SqlRefused(MemcoreError):
    """The statement tries something SQL memory does not allow (files, network, settings, ...)."""

    status = 403
    code = "SQL_REFUSED"


class SqlTimeout(MemcoreError):
    status = 408
    code = "SQL_TIMEOUT"


class SqlFailed(MemcoreError):
    """An ordinary SQL error: a syntax error, a missing table, a constraint."""

    status = 422
    code = "SQL_ERROR"


class EmbedderUnavailable(MemcoreError):
    status = 503
    code = "EMBEDDER_UNAVAILABLE"


class EmbedderMismatch(MemcoreError):
    """The retrieval index was built with another embedder (or dimension) than this run's."""

    status = 409
    code = "EMBEDDER_MISMATCH"


class AuditKeyMissing(MemcoreError):
    """The home's audit chain is signed by a key whose private half this process cannot find."""

    status = 409
    code = "AUDIT_KEY_MISSING"


# -- the memory service ---------------------------------------------------------------------------


class Unauthenticated(MemcoreError):
    """No API key, a malformed, unknown, revoked or expired one: one answer for all of them."""

    status = 401
    code = "UNAUTHENTICATED"


class IdentityOnWire(MemcoreError):
    """A request named a tenant, a user, an agent or a grant: only its API key may say who calls."""

    status = 400
    code = "IDENTITY_IN_REQUEST"


class MalformedRequest(MemcoreError):
    """A body that is not a JSON object, or not UTF-8."""

    status = 400
    code = "MALFORMED_REQUEST"


class BodyTooLarge(MemcoreError):
    status = 413
    code = "BODY_TOO_LARGE"


class UnknownOp(NotFound):
    code = "UNKNOWN_OP"


class RateLimited(MemcoreError):
    status = 429
    code = "RATE_LIMITED"


class RequestTimeout(MemcoreError):
    """The op ran past the service's request timeout. Its outcome is unknown to the caller: a
    write may still have committed (read it back, or repeat it with ``if_match_sha256``)."""

    status = 504
    code = "REQUEST_TIMEOUT"


class ServiceUnavailable(MemcoreError):
    """The service could not be reached, or is shutting down."""

    status = 503
    code = "SERVICE_UNAVAILABLE"


class CursorNotFound(NotFound):
    """A page cursor of no search kept for this scope: unknown, of another scope, past its time,
    or forgotten by a redaction. Run the search again."""

    code = "CURSOR_NOT_FOUND"


class CursorMismatch(InvalidInput):
    """A page cursor sent with another query or recipe than the search it continues."""

    code = "CURSOR_MISMATCH"


class TraceNotFound(NotFound):
    """A search trace no longer kept, or of another scope."""

    code = "TRACE_NOT_FOUND"


class LLMNotConfigured(MemcoreError):
    """An op that answers through a language model (``ask``) on a memory opened without one."""

    status = 501
    code = "LLM_NOT_CONFIGURED"


class CostCapReached(MemcoreError):
    """The namespace has spent its daily model budget (the tenant's ``daily_cost_cap_usd``)."""

    status = 429
    code = "COST_CAP_REACHED"


# -- remember: lenses, frames, receipts ---------------------------------------------------------


class LensNotFound(NotFound):
    """A lens this tenant never defined (or one of another tenant: the same answer)."""

    code = "LENS_NOT_FOUND"


class LensExpired(ScopeForbidden):
    code = "LENS_EXPIRED"


class LensNotWorn(ScopeForbidden):
    """A lens the caller is not assigned (only a principal, an admin key, may wear any lens)."""

    code = "LENS_NOT_WORN"


class CapabilityMissing(ScopeForbidden):
    """None of the worn lenses grants the capability the op needs (read, capture, decide, approve)."""

    code = "CAPABILITY_MISSING"


class FrameNotFound(NotFound):
    code = "FRAME_NOT_FOUND"


class FrameNotOwned(ScopeForbidden):
    """A frame another consumer of the tenant opened: only its consumer works under it."""

    code = "FRAME_NOT_OWNED"


class FrameClosed(MemcoreError):
    status = 409
    code = "FRAME_CLOSED"


class ReceiptInvalid(InvalidInput):
    """A receipt whose signature does not verify, whose fields were changed, or that is malformed."""

    code = "RECEIPT_INVALID"


class ReceiptKeyUnknown(ReceiptInvalid):
    """A receipt signed with a key the verifier does not hold."""

    code = "RECEIPT_KEY_UNKNOWN"


class ErasureUnderWay(MemcoreError):
    """An erasure of this scope is queued, running or failed: nothing is written there meanwhile."""

    status = 423
    code = "ERASURE_UNDER_WAY"


class ErasureNotFound(NotFound):
    code = "ERASURE_NOT_FOUND"


class WebhookNotFound(NotFound):
    code = "WEBHOOK_NOT_FOUND"
