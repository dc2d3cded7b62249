"""The reflect pipeline (``Memory.reflect``, ``Memory.reflect_phase``; docs/reflect.md): a
tenant's raw inputs digested into what its namespaces know, in five phases, each run on its own
and resumable from its own cursor (``ReflectStore``).

- reduce reads the tenant's state-change events after its cursor (up to the newest event when
  it starts) and stages each input's atomic claims (``reflect.reduce``), an input and its claims
  in one transaction, the cursor moved after each page;
- reflect, reweave and verify work on the claims whose events lie between their own cursor and
  their upstream phase's, each claim saved as soon as it is decided (``reflect.connect``,
  ``reflect.reweave``, ``reflect.verify``);
- verify writes a claim through the write paths: the point write (``run_set``) with the
  pipeline's provenance (its origin, and the claim's tag as source, which every event of the
  write carries as evidence), then the resolver's pair actions (``apply_pair``) for what it
  supersedes or refines. Before writing it marks the claim ``applying`` with the newest event
  seq; a claim found ``applying`` looks for its tag in the events after it first, so a run
  killed between the write and the save never writes twice;
- archive marks the inputs (and their claims) processed.

A cursor moves only once everything before it is done, so a phase killed midway and run again
ends where an uninterrupted run would have, and a phase run again after it finished finds
nothing to do. The pipeline never reads back what it wrote (``reflect.reduce.own_event``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import datetime
from typing import Iterable, Iterator, Sequence

from ..errors import InvalidInput, KeyHoldsFact, Locked, PinnedConflict, PreconditionFailed
from ..identity import Namespace, Scope
from ..model import FactVersion, Provenance
from ..reflect import PHASES, REFLECT_ACTOR, REFLECT_ORIGIN, Claim, PhaseReport, ReflectSettings, Source
from ..reflect.connect import claim_entities, connections
from ..reflect.model import APPLYING, CONNECTED, DECISION, PLANNED, REINFORCE, REJECTED, STAGED, UPSTREAM, WRITTEN
from ..reflect.reduce import INPUT_EVENTS, claims_of, decision_source, new_statements, own_event, row_source
from ..reflect.reweave import plan as reweave_plan
from ..reflect.verify import check, identical_index, known_types, settlement
from ..session import Session
from ..session.point import embed_texts, run_set
from ..session.resolution import apply_pair
from ..substrate.events import StateChange
from ..texts import value_text
from ..write.options import SetOptions
from ..write.settle import request_of
from ..write.templates import canonical_form
from ..write.tenant_config import resolve_threshold

# What the write path refuses for reasons of the claim itself: kept as the claim's reason.
_REFUSALS = (InvalidInput, Locked, PinnedConflict, PreconditionFailed, KeyHoldsFact)
_SETTLE_STEPS = 4  # a retirement and a flag cleared at most: a bound, not a loop


def _chunks(items: Sequence[Claim], size: int) -> Iterator[Sequence[Claim]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _by_namespace(claims: Iterable[Claim]) -> dict[Namespace, list[Claim]]:
    out: dict[Namespace, list[Claim]] = {}
    for claim in claims:
        out.setdefault(claim.namespace, []).append(claim)
    return out


class ReflectService:
    def __init__(self, session: Session, settings: ReflectSettings | None = None) -> None:
        self.session = session
        self.settings = settings or ReflectSettings()
        self.store = session.store.reflect

    def run(self, tenant: str) -> list[PhaseReport]:
        return [self.phase(tenant, phase) for phase in PHASES]

    def phase(self, tenant: str, phase: str) -> PhaseReport:
        if phase not in PHASES:
            raise InvalidInput(f"phase must be one of {', '.join(PHASES)}; got {phase!r}", field="phase")
        session = self.session
        session.refuse_read_only(f"the reflect phase {phase} keeps what it decides")
        cursors = self.store.cursors(tenant)
        since = cursors.get(phase, 0)
        if phase == "reduce":
            with session.locked():  # every event up to here is committed
                upto = max(since, session.store.substrate.last_event_seq())
        else:
            upto = max(since, cursors.get(UPSTREAM[phase], 0))
        counts = getattr(self, f"_{phase}")(tenant, since, upto)
        self.store.advance(tenant, phase, upto, session.clock.now())
        return PhaseReport(tenant, phase, since, upto, dict(sorted(counts.items())))

    def state(self, tenant: str) -> dict:
        return {
            "cursors": self.store.cursors(tenant),
            "inputs": self.store.inputs(tenant),
            "claims": [c.to_dict() for c in self.store.claims(tenant)],
        }

    def _now(self) -> datetime:
        return self.session.clock.now()

    # -- reduce ------------------------------------------------------------------------------------

    def _reduce(self, tenant: str, since: int, upto: int) -> Counter:
        counts: Counter = Counter()
        position = since
        while page := self.store.events(tenant, position, upto, self.settings.page, INPUT_EVENTS):
            sources = self._sources(page, counts)
            read = self.store.reduced(tenant, [s.ref for s in sources])
            for source in sources:
                if source.ref in read:
                    continue  # staged before a kill: its claims are there
                claims = claims_of(source)
                self.store.stage(source, claims, self._now())
                counts[f"inputs_{source.kind}"] += 1
                counts["claims"] += len(claims)
            position = page[-1].seq
            self.store.advance(tenant, "reduce", position, self._now())
        return counts

    def _sources(self, events: Sequence[StateChange], counts: Counter) -> list[Source]:
        versions, substrate = self.session.versions, self.session.store.substrate
        out: dict[str, Source] = {}
        for event in events:
            if own_event(event):
                counts["own_events"] += 1
                continue
            if event.event_type == "decision.recorded":
                trace = substrate.decision(event.tenant, event.key.split(":", 1)[1])
                found = [decision_source(trace, int(event.summary["version"]), event.seq)] if trace else []
            else:
                ns = Namespace(event.tenant, Scope(event.scope), event.owner_id)
                rows = versions.version_rows([f.after_version_id for f in event.facts])
                states = [versions.fact_state(ns, r.key, r.fact_id) for r in new_statements(rows)]
                found = [row_source(s, event.seq) for s in states if s is not None]
            for source in found:
                if source is not None:
                    out.setdefault(source.ref, source)
        return list(out.values())

    # -- reflect -----------------------------------------------------------------------------------

    def _open(self, tenant: str, since: int, upto: int, *statuses: str) -> list[Claim]:
        return [c for c in self.store.claims(tenant, after=since, upto=upto) if c.status in statuses]

    def _reflect(self, tenant: str, since: int, upto: int) -> Counter:
        counts: Counter = Counter()
        for ns, group in _by_namespace(self._open(tenant, since, upto, STAGED)).items():
            for chunk in _chunks(group, self.settings.page):
                connected = self._connect(ns, chunk)
                self.store.save(connected, self._now())
                counts.update(c.kind for claim in connected for c in claim.connections)
                counts["claims"] += len(connected)
        return counts

    def _connect(self, ns: Namespace, claims: Sequence[Claim]) -> list[Claim]:
        session, versions, limit = self.session, self.session.versions, self.settings.max_links
        near: list[list[tuple[FactVersion, float]]] = [[] for _ in claims]
        if session.embedder is not None and session.peers is not None:
            vectors = embed_texts(session.embedder, [c.text for c in claims])
            session.peers.warm(ns)
            for i, found in enumerate(session.peers.nearest(ns, vectors, self.settings.link_cosine, limit + 2)):
                for fact_id, key, cosine in found:
                    state = versions.fact_state(ns, key, fact_id)
                    if state is not None:
                        near[i].append((state, cosine))
        names = {n.casefold(): n for n in session.graph_entities(ns)}
        now, out = self._now(), []
        for claim, peers in zip(claims, near):
            wanted = sorted(names[e] for e in claim_entities(claim) if e in names)
            linked = []
            for observation, links in session.graph.observations(ns, wanted, now) if wanted else ():
                entity = observation.subject if observation.subject in wanted else observation.object
                for link in links:
                    state = versions.fact_state(ns, link.key, link.fact_id)
                    if state is not None:
                        linked.append((state, entity))
            found = connections(claim, peers, linked, limit=limit)
            out.append(dataclasses.replace(claim, status=CONNECTED, connections=found))
        return out

    # -- reweave -----------------------------------------------------------------------------------

    def _reweave(self, tenant: str, since: int, upto: int) -> Counter:
        counts: Counter = Counter()
        versions = self.session.versions
        for chunk in _chunks(self._open(tenant, since, upto, CONNECTED), self.settings.page):
            planned = []
            for claim in chunk:
                ns = claim.namespace
                states = {c.fact_id: versions.fact_state(ns, c.key, c.fact_id) for c in claim.connections}
                under = [s for s in versions.fact_states(ns, claim.key) if s.live]
                decided = reweave_plan(claim, states, under, self._act_cosine(tenant, claim.memory_type))
                planned.append(dataclasses.replace(claim, status=PLANNED, plan=decided))
                counts[decided.action] += 1
            self.store.save(planned, self._now())
        return counts

    def _act_cosine(self, tenant: str, memory_type: str) -> float:
        """How close a connection must be to act on: the setting, else what the write path calls close."""
        if self.settings.act_cosine is not None:
            return self.settings.act_cosine
        config = self.session.write_config(tenant)
        return resolve_threshold(config.type(memory_type), config.tenant, self.session.calibration(tenant)).value

    # -- verify ------------------------------------------------------------------------------------

    def _verify(self, tenant: str, since: int, upto: int) -> Counter:
        counts: Counter = Counter()
        for claim in self._open(tenant, since, upto, PLANNED, APPLYING):
            done = self._apply(claim)
            self.store.save([done], self._now())
            counts[done.status] += 1
            if done.status == REJECTED:
                counts[f"rejected_{(done.reason or '').split(':', 1)[0]}"] += 1
        return counts

    def _apply(self, claim: Claim) -> Claim:
        session, ns = self.session, claim.namespace
        if session.peers is not None:
            session.peers.warm(ns)  # a first load embeds outside the store's lock
        with session.locked():
            now = self._now()
            if claim.status == PLANNED:
                reason = self._check(claim, now)
                if reason is not None:
                    return dataclasses.replace(claim, status=REJECTED, reason=reason)
                claim = dataclasses.replace(
                    claim, status=APPLYING, applying_from=session.store.substrate.last_event_seq()
                )
                self.store.save([claim], now)
            try:
                holder, outcome = self._stated(claim, now)
            except _REFUSALS as exc:
                return dataclasses.replace(claim, status=REJECTED, reason=f"refused: {exc.code}: {exc.message}"[:300])
            if holder is None:
                return dataclasses.replace(claim, status=REJECTED, reason="not_written: the write path kept nothing")
            self._settle(claim, holder, now)
            return dataclasses.replace(
                claim, status=WRITTEN, fact_id=holder.fact_id, fact_key=holder.key, outcome=outcome
            )

    def _fact(self, ns: Namespace, ref: tuple[str, str] | None) -> FactVersion | None:
        return self.session.versions.fact_state(ns, ref[1], ref[0]) if ref else None

    def _check(self, claim: Claim, now: datetime) -> str | None:
        ns, plan = claim.namespace, claim.plan
        live = [
            s
            for states in self.session.versions.namespace_states(ns).values()
            for s in states
            if s.fact_id != claim.source_fact
        ]
        return check(
            claim,
            plan,
            known=known_types(self.session.write_config(ns.tenant).types),
            max_chars=self.settings.max_claim_chars,
            identical=identical_index(live).get(canonical_form(claim.text)),
            target=self._fact(ns, plan.target),
            holder=self._fact(ns, (plan.holder, claim.source_key)) if plan.holder else None,
            now=now,
        )

    def _stated(self, claim: Claim, now: datetime) -> tuple[FactVersion | None, str]:
        """The fact that states the claim once written (or the one it reinforces), and what the
        write did: found by the claim's tag in the events since it began, else written now."""
        ns, plan = claim.namespace, claim.plan
        if plan.key is None:
            return self._fact(ns, (plan.holder, claim.source_key)), "held"
        landed = self.store.tagged(ns.tenant, claim.applying_from or 0, claim.tag)
        if not landed:
            self._write(claim, now)
            landed = self.store.tagged(ns.tenant, claim.applying_from or 0, claim.tag)
        if not landed:  # nothing written: the write path merged it into a fact saying the same
            same = identical_index(s for g in self.session.versions.namespace_states(ns).values() for s in g)
            return same.get(canonical_form(value_text(plan.value))), "unchanged"
        changes = [f for e in landed for f in e.facts]
        mine = [f for f in changes if f.key == plan.key] or changes
        outcome = ",".join(dict.fromkeys(e.event_type for e in landed))
        return self._fact(ns, (mine[-1].fact_id, mine[-1].key)), outcome

    def _write(self, claim: Claim, now: datetime) -> None:
        plan = claim.plan
        options: dict = {"memory_type": plan.memory_type or claim.memory_type, "source_turn": claim.source_ref}
        if plan.action != REINFORCE:  # a reinforcement says the target's own value again
            options.update(observed_at=claim.observed_at)
            if claim.subject:
                options["subject"] = claim.subject
            if claim.relations:
                options["relations"] = [list(r) for r in claim.relations]
        provenance = Provenance(tenant=claim.tenant, actor=REFLECT_ACTOR, origin=REFLECT_ORIGIN, source=claim.tag)
        parsed = SetOptions.parse(options)
        request = request_of(
            claim.namespace, plan.key, plan.value, provenance, now, parsed, False, plan.action == REINFORCE
        )
        run_set(self.session, request)

    def _settle(self, claim: Claim, holder: FactVersion, now: datetime) -> None:
        """Retire what the claim supersedes or refines, and clear a flag against its own source."""
        ns, plan = claim.namespace, claim.plan
        source_ref = (claim.source_fact, claim.source_key) if claim.source_kind != DECISION else None
        for _ in range(_SETTLE_STEPS):
            holder = self._fact(ns, (holder.fact_id, holder.key))
            step = settlement(plan, holder, self._fact(ns, plan.target), self._fact(ns, source_ref), now)
            if step is None:
                return
            row, peer, action = step
            verdict = plan.action if action.kind == "retire" else "elaboration"
            apply_pair(self.session, ns, row, peer, action, REFLECT_ACTOR, verdict, plan.cosine or 1.0, "reflect", now)

    # -- archive -----------------------------------------------------------------------------------

    def _archive(self, tenant: str, since: int, upto: int) -> Counter:
        counts: Counter = Counter()
        due = [
            i["source_ref"]
            for i in self.store.inputs(tenant)
            if since < i["source_seq"] <= upto and i["status"] != "archived"
        ]
        for start in range(0, len(due), self.settings.page):
            counts["archived"] += self.store.archive(tenant, due[start : start + self.settings.page], self._now())
        return counts
