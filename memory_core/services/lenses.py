"""Lens administration: define a lens (a new version of its contract and preferences), expire it,
assign it to consumers and take it back, define permission groups, and load a whole roster at
once. Every change is admin-only, audited, and emits its event; ``lenses`` lists what a caller
may see of them (an admin: all of the tenant's; anyone else: the lenses it wears)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Mapping, Sequence

from ..errors import AdminRequired, LensNotFound
from ..identity import Namespace, Scope
from ..session import RunService
from ..session.substrate import RecordWrite, commit_records, consumer_of
from ..substrate.answers import LensInfo, RosterLoaded
from ..substrate.lenses import (
    Assignment,
    Lens,
    PermissionGroup,
    Worn,
    lens_id_of,
    parse_consumer,
    parse_lens,
    parse_permissions,
)
from ..substrate.roster import parse_roster
from ..temporal import parse_instant
from ..values import content_sha256

LENS_TYPE = "lens"


class LensService(RunService):
    def _admin(self, what: str) -> None:
        if not self.identity.admin:
            raise AdminRequired(f"{what} needs an admin grant")

    @property
    def _tenant_ns(self) -> Namespace:
        return Namespace(self.identity.tenant, Scope.TENANT, self.identity.tenant)

    def _defined(self) -> dict[str, Lens]:
        return {lens.lens_id: lens for lens in self.session.store.substrate.lenses(self.identity.tenant)}

    def _lens_write(self, lens: Lens) -> RecordWrite:
        body = json.dumps({"contract": lens.contract(), "preferences": lens.preferences.to_dict()}, sort_keys=True)
        return RecordWrite(
            self._tenant_ns,
            f"lens:{lens.lens_id}",
            "lens_define",
            "lens.defined",
            LENS_TYPE,
            (lens,),
            content_sha256(body),
            summary={"lens_id": lens.lens_id, "version": lens.version},
        )

    def _new_lens(self, lens_id: str, contract: Mapping[str, Any], preferences: Any, held: Lens | None) -> Lens:
        return parse_lens(
            self.identity.tenant,
            lens_id,
            contract,
            preferences,
            version=(held.version + 1) if held else 1,
            defined_at=self.session.clock.now(),
            defined_by=self.identity.actor,
        )

    def define(self, lens_id: str, contract: Mapping[str, Any], preferences: Any) -> LensInfo:
        self._admin("defining a lens")
        lens_id = lens_id_of(lens_id)
        with self.session.locked():
            lens = self._new_lens(lens_id, contract, preferences, self._defined().get(lens_id))
            commit_records(self.session, self.identity.actor, [self._lens_write(lens)])
        return self._info(lens)

    def expire(self, lens_id: str, at: Any) -> LensInfo:
        self._admin("expiring a lens")
        when = parse_instant(at, "at") or self.session.clock.now()
        with self.session.locked():
            held = self._held(lens_id)
            contract = {**held.contract(), "expires_at": when.isoformat()}
            lens = self._new_lens(held.lens_id, contract, held.preferences.to_dict(), held)
            commit_records(self.session, self.identity.actor, [self._lens_write(lens)])
        return self._info(lens)

    def _held(self, lens_id: str) -> Lens:
        lens = self._defined().get(lens_id_of(lens_id))
        if lens is None:
            raise LensNotFound(f"no lens {lens_id!r} in this tenant", lens_id=lens_id)
        return lens

    def assign(self, lens_id: str, consumer: str, assigned: bool) -> LensInfo:
        self._admin("assigning a lens")
        who = parse_consumer(consumer)
        with self.session.locked():
            held = self._held(lens_id)
            write = self._assignment_write(held.lens_id, who, assigned)
            if write is not None:
                commit_records(self.session, self.identity.actor, [write])
        return self._info(held)

    def _assignment_write(self, lens_id: str, consumer: str, assigned: bool) -> RecordWrite | None:
        lines = self.session.store.substrate.assignments(self.identity.tenant, consumer)
        last = next((a for a in lines if a.lens_id == lens_id), None)
        if (last.assigned if last else False) == assigned:
            return None  # already so: nothing to record
        line = Assignment(
            self.identity.tenant,
            lens_id,
            consumer,
            (last.version + 1) if last else 1,
            assigned,
            self.session.clock.now(),
            self.identity.actor,
        )
        return RecordWrite(
            self._tenant_ns,
            f"lens:{lens_id}",
            "lens_assign" if assigned else "lens_unassign",
            "lens.assigned" if assigned else "lens.unassigned",
            LENS_TYPE,
            (line,),
            # Who wears a lens is an admin's to know (``lenses``): the event names the lens only.
            summary={"lens_id": lens_id, "version": line.version},
        )

    def define_group(self, group: str, permissions: Sequence[str]) -> dict[str, Any]:
        self._admin("defining a permission group")
        with self.session.locked():
            write = self._group_write(lens_id_of(group, "group"), permissions)
            commit_records(self.session, self.identity.actor, [write])
        return {"group": write.records[0].name, "permissions": sorted(p.value for p in write.records[0].permissions)}

    def _group_write(
        self, name: str, permissions: Sequence[str], versions: dict[str, int] | None = None
    ) -> RecordWrite:
        held = versions if versions is not None else self._group_versions()
        granted = parse_permissions(permissions)
        group = PermissionGroup(
            self.identity.tenant,
            name,
            held.get(name, 0) + 1,
            granted,
            self.session.clock.now(),
            self.identity.actor,
        )
        return RecordWrite(
            self._tenant_ns,
            f"group:{name}",
            "permissions_define",
            "permissions.defined",
            LENS_TYPE,
            (group,),
            content_sha256(json.dumps(sorted(p.value for p in granted))),
            summary={"group": name},
        )

    def _group_versions(self) -> dict[str, int]:
        return self.session.store.substrate.group_versions(self.identity.tenant)

    def load_roster(self, roster: Any) -> RosterLoaded:
        """Define a roster's groups and lenses and make its assignments, all in one transaction."""
        self._admin("loading a lens roster")
        parsed = parse_roster(roster)
        with self.session.locked():
            defined, versions = self._defined(), self._group_versions()
            writes = [self._group_write(name, perms, versions) for name, perms in parsed.groups.items()]
            for lens_id, (contract, preferences) in parsed.lenses.items():
                writes.append(self._lens_write(self._new_lens(lens_id, contract, preferences, defined.get(lens_id))))
            assigned = 0
            for lens_id, consumers in parsed.assignments.items():
                for consumer in consumers:
                    write = self._assignment_write(lens_id, consumer, True)
                    if write is not None:
                        writes.append(write)
                        assigned += 1
            commit_records(self.session, self.identity.actor, writes)
        return RosterLoaded(tuple(parsed.groups), tuple(parsed.lenses), assigned)

    def lenses(self) -> list[LensInfo]:
        substrate, tenant = self.session.store.substrate, self.identity.tenant
        mine = {a.lens_id for a in substrate.assignments(tenant, consumer_of(self.identity)) if a.assigned}
        return [self._info(lens) for lens in substrate.lenses(tenant) if self.identity.admin or lens.lens_id in mine]

    def _info(self, lens: Lens, now: datetime | None = None) -> LensInfo:
        substrate, tenant = self.session.store.substrate, self.identity.tenant
        worn = Worn((lens,), substrate.permission_groups(tenant))
        wearers = tuple(a.consumer for a in substrate.assignments(tenant) if a.lens_id == lens.lens_id and a.assigned)
        return LensInfo(
            lens_id=lens.lens_id,
            version=lens.version,
            title=lens.title,
            contract=lens.contract(),
            preferences=lens.preferences.to_dict(),
            capabilities=tuple(sorted(c.value for c in worn.capabilities_of(lens))),
            worn_by=wearers if self.identity.admin else (),
            expired=lens.expired(now or self.session.clock.now()),
        )


def contract_of(**fields: Any) -> dict[str, Any]:
    """The contract fields a caller gave (those left as None take their defaults)."""
    return {name: value for name, value in fields.items() if value is not None}
