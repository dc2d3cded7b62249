"""``ask``: recall, then answer through the LLM port with citations held to the hits.

A search that abstains is answered as an abstention without asking the model. Otherwise the
hits go to the model (``retrieval.answer``), within the namespace's daily model budget (the
tenant's ``daily_cost_cap_usd``, which the conflict resolver spends from too), and its
answer keeps only the citations that name a hit. The hits count as shown (the usage fold's
exposures) only once the question is answered: a refusal (the budget spent, the model
unavailable) leaves the store as it was, but for what a model call was paid.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import CostCapReached, InvalidInput, LLMNotConfigured
from ..identity import Namespace
from ..llm import LLMMalformed, LLMRefused, LLMUnavailable
from ..retrieval.answer import ANSWER_SCHEMA, Answer, answer_messages, checked_answer
from ..retrieval.types import SearchResult
from ..session.usage import record_exposures
from .search import RECALL_SOURCES, SearchService

ANSWER_MAX_TOKENS = 512


class AskService(SearchService):
    def ask(self, question: str, **options: Any) -> Answer:
        session = self.session
        llm = session.llm
        if llm is None:
            raise LLMNotConfigured(
                "ask answers through a language model: memcore ask --llm URL, memcore serve --llm URL, "
                "or Memory.open(..., llm=...)"
            )
        if session.store.read_only:  # its spend could not be recorded, so the budget could not hold
            raise InvalidInput("ask spends from the daily model budget: open the home for writing", field="llm")
        result = self._run(
            question,
            None,
            count_exposures=False,
            sources=RECALL_SOURCES,
            observed_from=None,
            observed_to=None,
            token_budget=None,
            **options,
        )
        namespace = self.identity.namespace(options["scope"])
        common = {"trace_id": result.trace_id, "pending_extraction": result.pending_extraction, "notes": result.notes}
        if result.abstain:
            self._shown(namespace, result)
            return Answer(question, None, True, result.verdict, (), result.hits, **common)
        today = session.clock.now().date()
        cap = session.write_config(namespace.tenant).tenant.daily_cost_cap_usd
        if session.ledger.spend(namespace, today) >= cap:
            raise CostCapReached(f"this scope has spent its model budget for {today} (daily_cost_cap_usd {cap})")
        try:
            reply = llm.complete_json(
                answer_messages(question, result.hits, result.as_of),
                ANSWER_SCHEMA,
                schema_name="memory_answer",
                max_tokens=ANSWER_MAX_TOKENS,
            )
        except (LLMMalformed, LLMRefused, LLMUnavailable) as exc:  # what was paid for counts all the same
            spent = exc.details.get("cost_usd")
            if isinstance(spent, (int, float)) and spent > 0:
                session.ledger.add_spend(namespace, today, "ask", float(spent))
            raise
        session.ledger.add_spend(namespace, today, "ask", reply.usage.cost_usd)
        answer = checked_answer(question, result.hits, reply.data)
        self._shown(namespace, result)
        return dataclasses.replace(
            answer,
            model=reply.model,
            prompt_tokens=reply.usage.prompt_tokens,
            completion_tokens=reply.usage.completion_tokens,
            cost_usd=reply.usage.cost_usd,
            **common,
        )

    def _shown(self, namespace: Namespace, result: SearchResult) -> None:
        """Count the answer's hits as shown, as a recall counts its own."""
        record_exposures(self.session, namespace, [h.fact_id for h in result.hits], self.session.clock.now())
