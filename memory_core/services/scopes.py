"""The scope-wide ops of the Memory tool: ``clear`` and ``clear_undo``, ``namespace_delete`` and
``namespace_register``, a cross-scope ``promote``, and ``proposal_decide``. Each decides with a
pure function (``lifecycle.clear``) and writes through the session's one commit."""

from __future__ import annotations

from typing import Any

from ..audit import audit_entry
from ..errors import AdminRequired, InvalidInput
from ..identity import Namespace, Scope
from ..lifecycle.clear import (
    copy_options,
    decide_clear,
    decide_clear_undo,
    decide_proposal,
    promotable,
    promotion_link,
)
from ..lifecycle.flags import KeyOp
from ..lifecycle.namespaces import DELETED, REGISTERED
from ..model import WriteResult
from ..session import Commit, RunService
from ..session.core import key_changes
from ..session.keys import decide_key
from ..session.point import set_value
from ..session.reads import fact_at_time
from ..write.settle import validate_key


class ScopesService(RunService):
    def clear(self, *, scope: str | Scope, dry_run: bool) -> WriteResult:
        session, actor = self.session, self.identity.actor
        namespace = self.identity.namespace(scope)
        with session.locked():
            now = session.clock.now()
            # Each key's facts as they stand, read in one go (as rollback reads them).
            states = session.versions.namespace_states(namespace)
            ops = [KeyOp(namespace, key, tuple(facts), actor, now, session.new_id) for key, facts in states.items()]
            plan = decide_clear(ops, session.new_id())
            details: dict[str, Any] = {
                "change_id": plan.change_id,
                "cleared": list(plan.cleared),
                "kept_locked": list(plan.kept_locked),
            }
            if dry_run or not plan.rows:
                return WriteResult("would_clear" if dry_run else "unchanged", "*", (), {**details, "dry_run": dry_run})
            at = max(r.created_at for r in plan.rows)
            audit = audit_entry(namespace, "*", "clear", plan.rows, None, actor, at)
            session.commit(Commit(key_changes(namespace, plan.rows), (audit,)))
        return WriteResult("cleared", "*", plan.rows, {**details, "dry_run": False})

    def clear_undo(self, change_id: str, *, scope: str | Scope) -> WriteResult:
        if not isinstance(change_id, str) or not change_id.strip():
            raise InvalidInput("change_id must be the change id a clear answered", field="change_id")
        session, actor = self.session, self.identity.actor
        namespace = self.identity.namespace(scope)
        with session.locked():
            now = session.clock.now()
            touched = []
            for key, facts in session.versions.namespace_states(namespace).items():
                history = session.versions.history(namespace, key)
                if any(r.change_id == change_id for r in history):
                    touched.append((KeyOp(namespace, key, tuple(facts), actor, now, session.new_id), history))
            plan = decide_clear_undo(touched, change_id, session.new_id())
            if plan.rows:
                at = max(r.created_at for r in plan.rows)
                audit = audit_entry(namespace, "*", "clear_undo", plan.rows, None, actor, at)
                session.commit(Commit(key_changes(namespace, plan.rows), (audit,)))
        details = {
            "change_id": plan.change_id,
            "restored": list(plan.restored),
            "changed_since": list(plan.changed_since),
        }
        return WriteResult("restored" if plan.rows else "unchanged", "*", plan.rows, details)

    def namespace_delete(self, *, scope: str | Scope) -> dict[str, Any]:
        return self._set_state(scope, DELETED)

    def namespace_register(self, *, scope: str | Scope) -> dict[str, Any]:
        return self._set_state(scope, REGISTERED)

    def _set_state(self, scope: str | Scope, state: str) -> dict[str, Any]:
        namespace = self._owned(scope)
        session = self.session
        session.refuse_read_only(f"namespace_{'delete' if state == DELETED else 'register'}")
        with session.locked():
            changed = session.store.namespaces.set_state(namespace, state, self.identity.actor, session.clock.now())
        return {
            "scope": namespace.scope.value,
            "owner_id": namespace.owner_id,
            "state": state,
            "changed": changed,
        }

    def _owned(self, scope: str | Scope) -> Namespace:
        """A namespace the caller may delete: its own user or agent namespace (the scope's owner);
        the tenant's shared one is everyone's, so only an admin run deletes it."""
        namespace = self.identity.namespace(scope)
        if namespace.scope in (Scope.TENANT, Scope.GLOBAL) and not self.identity.admin:
            raise AdminRequired(
                f"deleting or registering the {namespace.scope.value} namespace needs an admin run",
                scope=namespace.scope.value,
            )
        return namespace

    def promote(self, key: str, *, scope: str | Scope, to_scope: str | Scope) -> WriteResult:
        key = validate_key(key)
        source_ns = self.identity.namespace(scope)
        target_ns = self.identity.namespace(to_scope)  # refuses a scope the run may not write
        if target_ns == source_ns:
            raise InvalidInput(
                "promote copies a fact into another scope: to_scope names the same one", field="to_scope"
            )
        session = self.session
        source = promotable(fact_at_time(session, source_ns, key, None, None), key, source_ns.scope.value)
        result = set_value(
            session,
            self.identity,
            self.origin,
            key,
            source.value,
            scope=to_scope,
            dry_run=False,
            **copy_options(source),
        )
        copy = result.version
        if copy is not None:
            # Cross-scope promotion is not one transaction (as in the seed): the copy stands first,
            # then its lineage names the row it came from.
            session.store.lineage.record_sources([promotion_link(copy, source, session.clock.now())])
        details = {
            **result.details,
            "promoted_from": {"scope": source_ns.scope.value, "key": source.key, "fact_id": source.fact_id},
            "to_scope": target_ns.scope.value,
        }
        return WriteResult(result.verdict, result.key, result.rows, details)

    def proposal_decide(self, key: str, *, scope: str | Scope, accept: bool) -> WriteResult:
        if not isinstance(accept, bool):
            raise InvalidInput("accept must be true or false", field="accept")
        op = "promote" if accept else "reject"
        return decide_key(self.session, self.identity, key, scope, lambda found: decide_proposal(found, accept), op)
