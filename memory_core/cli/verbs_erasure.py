"""Erasure (admin): erase a user, an agent, namespaces or a whole tenant from every plane of the
home and prove it (erase), the requests as they stand (erasures), and resume the ones a stopped
process left (erasure-recover). Through a memory service (``--url``, an admin key) they run on
the service's home."""

from __future__ import annotations

from typing import Any

from ..erasure import ErasureRequest, ErasureStatus
from .registry import EXIT_ERROR, Call, Output, UsageError, arg, verb


def _line(request: ErasureRequest) -> str:
    residue = "" if request.residue_count is None else f", residue {request.residue_count}"
    steps = f"{len(request.steps)} step(s) done"
    text = f"{request.request_id} {request.target.describe()}: {request.status.value} ({steps}{residue})"
    return text + (f"\n  {request.error}" if request.error else "")


@verb(
    "erase",
    "erase a user, an agent, namespaces or a whole tenant from every plane, with a residue census (admin)",
    arg("erase_tenant", metavar="tenant", help="the tenant"),
    arg("--user", dest="erase_user", help="erase this user's own scope, keys and records"),
    arg("--agent", dest="erase_agent", help="erase this agent's scope, keys and records"),
    arg("--namespace", action="append", dest="namespaces", help="scope/owner (repeat for several)"),
    arg("--whole-tenant", action="store_true", help="erase every row of the tenant (nothing else named)"),
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def erase(call: Call) -> Output:
    a = call.args
    named: dict[str, Any] = {"user": a.erase_user, "agent": a.erase_agent, "namespaces": a.namespaces}
    if not (any(v is not None for v in named.values()) or a.whole_tenant):
        raise UsageError("name --user, --agent or --namespace, or say --whole-tenant to erase the whole tenant")
    if a.whole_tenant and any(v is not None for v in named.values()):
        raise UsageError("--whole-tenant erases everything of the tenant: name nobody else with it")
    request = (call.remote or call.memory).erase(a.erase_tenant, **named)
    doc = request.to_dict()
    return doc, _line(request), 0 if request.status is ErasureStatus.VERIFIED else EXIT_ERROR


@verb(
    "erasures",
    "every erasure request as it stands, or one with its residue census (admin)",
    arg("request_id", nargs="?", help="one request"),
    scope=False,
    identity=False,
    remote=True,
)
def erasures(call: Call) -> Output:
    found = (call.remote or call.memory).erasures(call.args.request_id)
    if call.args.request_id:
        [request] = found
        census = "\n".join(f"  {where}: {n}" for where, n in request.residue.items())
        return request.to_dict(), _line(request) + ("\n" + census if census else ""), 0
    return [r.to_dict() for r in found], "\n".join(_line(r) for r in found) or "(no erasure requests)", 0


@verb(
    "erasure-recover",
    "resume the erasures a stopped process left; abandon one after --max-attempts runs (admin)",
    arg("--max-attempts", type=int, default=3, help="runs before a request is abandoned (default 3)"),
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def erasure_recover(call: Call) -> Output:
    counts = (call.remote or call.memory).recover_erasures(max_attempts=call.args.max_attempts)
    return counts, ", ".join(f"{k} {v}" for k, v in counts.items()), 0
