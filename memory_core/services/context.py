"""remember's reads: ``render`` (the view a lens and a frame give of the substrate, with a signed
receipt), ``get_context`` (that view ranked and fitted to a token budget over berrypicking
passes: lessons and precedent, each item explained, with a receipt) and the retrieval feedback on
what a context surfaced. Every answer is recorded as an interaction.

A user's structured profile (docs/workers.md) is a memory row, so a lens that admits memory type
``profile`` admits it like any row; both answers show it as its rendered properties, marked as
derived, and ``get_context`` packs it as a section of its own, first, within the budget."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import datetime
from typing import Any, Iterable, Sequence

from ..errors import InvalidInput, NotFound, ScopeForbidden
from ..identity import Namespace, Scope
from ..inputs import integer, text
from ..profiles import PROFILE_KEY, PROFILE_TYPE
from ..session import RunService
from ..session.profiles import ProfileRead, read_profile
from ..session.substrate import (
    consumer_of,
    owned_frame,
    read_scopes,
    record_answer,
    sign_receipt,
    substrate_items,
    wear,
)
from ..substrate.answers import ContextAnswer, Feedback, View, ViewItem
from ..substrate.context import admit, select, shadow
from ..substrate.decisions import parse_feedback
from ..substrate.frames import Frame
from ..substrate.items import Item, task_terms, terms_of
from ..substrate.lenses import Capability, Lens
from ..substrate.rank import Factors, ranked
from ..substrate.receipts import Disclosed
from ..substrate.refs import parse_ref

MAX_BUDGET = 1_000_000


def frame_terms(frame: Frame | None, query: str | None) -> frozenset[str]:
    """What a frame (and a query) asks for: the words of its goal, its tags and its intent."""
    found = set(terms_of(query))
    if frame is not None:
        found |= terms_of(frame.goal) | task_terms(frame.intent, frame.tags)
    return frozenset(found)


def _item(item: Item, factors: Factors, lenses: tuple[str, ...], tokens: int, extra: dict[str, Any]) -> ViewItem:
    return ViewItem(
        ref=item.ref,
        plane=item.plane,
        scope=item.scope.value,
        key=item.key,
        text=item.text,
        value=item.value,
        entity_type=item.entity_type,
        version_id=item.version_id,
        content_sha256=item.content_sha256,
        valid_at=item.valid_at,
        lenses=lenses,
        why={**factors.to_dict(), **extra},
        tokens=tokens,
    )


def _disclosed(items: Sequence[ViewItem]) -> list[Disclosed]:
    return [Disclosed(i.ref, i.version_id, i.content_sha256) for i in items]


def _derived(profile: ProfileRead) -> dict[str, Any]:
    """What marks a profile as derived from facts, and whether it still says what they say."""
    built = profile.built  # never None: a profile is served only once built
    return {
        "derived": "structured_profile",
        "status": profile.status,
        "stale": profile.status == "stale",
        "source_count": built.source_count,
        "schema_hash": built.schema_hash,
    }


class ContextService(RunService):
    def _setup(
        self, lenses: Sequence[str] | None, frame_id: str | None, scopes: Iterable[str] | None
    ) -> tuple[
        Any,
        Frame | None,
        tuple[Scope, ...],
        list[Item],
        dict[str, tuple[Lens, ...]],
        datetime,
        tuple[Item, ProfileRead] | None,
    ]:
        worn = wear(self.session, self.identity, lenses, Capability.READ)
        frame = owned_frame(self.session, self.identity, text(frame_id, "frame_id", max_chars=64)) if frame_id else None
        read = read_scopes(self.identity, worn, scopes)
        now = self.session.clock.now()
        items = substrate_items(self.session, self.identity, read, now)
        suppressed = frozenset(frame.suppressed) if frame is not None else frozenset()
        admitted = admit(items, worn, frozenset(read), suppressed)
        items, profile = self._profile([i for i in items if i.ref in admitted], now)
        return worn, frame, read, items, admitted, now, profile

    def _profile(self, items: list[Item], now: datetime) -> tuple[list[Item], tuple[Item, ProfileRead] | None]:
        """The caller's built profile among the admitted items, shown as its rendered text. Read
        only when a worn lens admitted a row at the profile key: the check costs a read of the
        user's live facts (its sources' digest)."""
        if not any(i.key == PROFILE_KEY and i.entity_type == PROFILE_TYPE and i.scope is Scope.USER for i in items):
            return items, None
        found = read_profile(self.session, self.identity.namespace(Scope.USER), now)
        if found.row is None or found.text is None:
            return items, None  # a row another actor wrote at the key is an ordinary row
        out, held = [], None
        for item in items:
            if item.plane == "fact" and item.version_id == found.row.id:
                item = held = dataclasses.replace(item, text=found.text)
            out.append(item)
        return out, (held, found) if held is not None else None

    def _tokens(self, items: Sequence[Item]) -> dict[str, int]:
        counts = self.session.tokens.count([i.text for i in items]) if items else []
        return {i.ref: n for i, n in zip(items, counts)}

    def render(self, lenses: Sequence[str] | None, frame_id: str | None, scopes: Iterable[str] | None) -> View:
        worn, frame, read, items, admitted, now, profile = self._setup(lenses, frame_id, scopes)
        tokens = self._tokens(items)
        derived = {profile[0].ref: _derived(profile[1])} if profile is not None else {}
        shown = [
            _item(
                item,
                factors,
                tuple(lens.lens_id for lens in admitted[item.ref]),
                tokens[item.ref],
                {"rank": rank, **derived.get(item.ref, {})},
            )
            for rank, (item, factors) in enumerate(ranked(items, admitted, frame_terms(frame, None), tokens, now), 1)
        ]
        receipt = sign_receipt(self.session, self.identity, "render", worn.ids, frame_id, _disclosed(shown))
        interaction = record_answer(
            self.session, self.identity, "render", worn.ids, frame_id, [i.ref for i in shown], receipt
        )
        return View(tuple(shown), worn.ids, tuple(s.value for s in read), frame_id, receipt, interaction.interaction_id)

    def get_context(
        self,
        lenses: Sequence[str] | None,
        frame_id: str | None,
        scopes: Iterable[str] | None,
        token_budget: int,
        query: str | None,
        passes: int,
        include_index: bool,
    ) -> ContextAnswer:
        budget = integer(token_budget, "token_budget", low=1, high=MAX_BUDGET)
        passes = integer(passes, "passes", low=1, high=5)
        query = text(query, "query", optional=True, max_chars=4000)
        worn, frame, read, items, admitted, now, profile = self._setup(lenses, frame_id, scopes)
        # A frame's own decisions are its footprint, not precedent for it.
        items = [i for i in items if not (i.plane == "decision" and frame is not None and i.frame_id == frame.frame_id)]
        counter = self.session.tokens
        # The profile is a section of its own, packed first: it is not ranked against the lessons
        # (nor shadowed by a key of another scope), and what it takes leaves the budget.
        section, packed = None, 0
        if profile is not None:
            item, found = profile
            items = [i for i in items if i.ref != item.ref]
            cost = counter.count([item.text])[0]
            if cost <= budget:
                lenses_of = tuple(lens.lens_id for lens in admitted[item.ref])
                section = _profile_view(item, found, lenses_of, cost)
                packed = cost
        kept, hidden = shadow(items)
        tokens = self._tokens(kept)
        chosen = select(
            kept,
            admitted,
            frame_terms(frame, query),
            budget - packed,
            tokens,
            now,
            max_passes=passes,
            include_index=include_index,
            count=lambda line: counter.count([line])[0],
        )
        shown = [
            _item(
                c.item,
                c.factors,
                c.lenses,
                c.tokens,
                {"rank": rank, "pass": c.found_in_pass, "scope": c.item.scope.value},
            )
            for rank, c in enumerate(chosen.chosen, 1)
        ]
        lessons = tuple(v for v in shown if v.plane != "decision")
        precedent = tuple(v for v in shown if v.plane == "decision")
        disclosed = _disclosed(([section] if section is not None else []) + shown)
        by_ref = {i.ref: i for i in kept}
        disclosed += [Disclosed(line.ref, by_ref[line.ref].version_id, _sha(line.text)) for line in chosen.index]
        receipt = sign_receipt(self.session, self.identity, "context", worn.ids, frame_id, disclosed)
        refs = [d.ref for d in disclosed]
        detail = {"tokens_used": chosen.tokens_used + packed, "passes": len(chosen.passes), "token_budget": budget}
        if profile is not None:
            detail["profile"] = profile[1].status if section is not None else "left_out"
        interaction = record_answer(
            self.session, self.identity, "context", worn.ids, frame_id, refs, receipt, query=query, detail=detail
        )
        return ContextAnswer(
            lessons=lessons,
            precedent=precedent,
            left_out=chosen.index,
            left_out_total=len(chosen.left_out),
            passes=chosen.passes,
            tokens_used=chosen.tokens_used + packed,
            token_budget=budget,
            token_counter=counter.name,
            lenses=worn.ids,
            scopes=tuple(s.value for s in read),
            frame_id=frame_id,
            shadowed={ref: by for ref, by in hidden.items() if ref in admitted},
            receipt=receipt,
            interaction_id=interaction.interaction_id,
            profile=section,
        )

    def feedback(self, interaction_id: str, ref: str, verdict: str) -> Feedback:
        """Record whether one ref a view or a context surfaced was useful."""
        interaction_id = text(interaction_id, "interaction_id", max_chars=64)
        parse_ref(ref)
        verdict = parse_feedback(verdict)
        found = self.session.store.substrate.interaction(self.identity.tenant, interaction_id)
        if found is None:  # a search's trace id, perhaps: its hits take feedback too (the usage fold)
            return self._search_feedback(interaction_id, ref, verdict)
        if found.consumer != consumer_of(self.identity) or found.kind not in ("render", "context"):
            raise NotFound(f"no view or context {interaction_id!r} of yours", interaction_id=interaction_id)
        if ref not in found.refs:
            raise InvalidInput(f"{ref} was not surfaced by {interaction_id}", field="ref")
        record_answer(
            self.session,
            self.identity,
            "feedback",
            found.lenses,
            found.frame_id,
            [ref],
            None,
            feedback=verdict,
            detail={"about": interaction_id},
        )
        return Feedback(interaction_id, ref, verdict)

    def _search_feedback(self, trace_id: str, ref: str, verdict: str) -> Feedback:
        """Feedback on a hit of a recall or search (named by its ``trace_id``) of a scope this run
        reads, while the search is kept (``search_memo.KEPT_FOR``): recorded as a feedback
        interaction about it, the same answer for a search of another scope as for none."""
        kept = self.session.searches.lookup(trace_id, self.session.clock.now())
        if kept is None or not self._reads(kept.namespace):
            raise NotFound(f"no view, context or search {trace_id!r} of yours", interaction_id=trace_id)
        if ref not in {f"{h.kind.value}:{h.fact_id}" for h in kept.result.hits}:
            raise InvalidInput(f"{ref} was not a hit of {trace_id}", field="ref")
        detail = {"about": trace_id, "search": kept.namespace.scope.value}
        record_answer(self.session, self.identity, "feedback", (), None, [ref], None, feedback=verdict, detail=detail)
        return Feedback(trace_id, ref, verdict)

    def _reads(self, namespace: Namespace) -> bool:
        try:
            return self.identity.namespace(namespace.scope) == namespace
        except (ScopeForbidden, InvalidInput):  # a scope this run may not read (or cannot name)
            return False


def _profile_view(item: Item, profile: ProfileRead, lenses: tuple[str, ...], tokens: int) -> ViewItem:
    built = profile.built
    return ViewItem(
        ref=item.ref,
        plane=item.plane,
        scope=item.scope.value,
        key=item.key,
        text=item.text,
        value=dict(built.properties),
        entity_type=item.entity_type,
        version_id=item.version_id,
        content_sha256=item.content_sha256,
        valid_at=item.valid_at,
        lenses=lenses,
        why=_derived(profile),
        tokens=tokens,
    )


def _sha(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()
