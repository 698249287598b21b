"""``POST /v1/check``: check a claim against the library (:func:`lit3r.app.check.check_claim`).

The reply is the check's JSON document: ``claim``, ``papers`` (verdict, confidence and verified quotes each,
papers with a verdict first), ``summary`` and ``trace_path``; an empty claim is a 422, an unknown paper id a 404.
The library filters (``collections``, ``tags``, ``year``, ``authors``) are those of ``/v1/ask``: the claim is
retrieved within the papers they leave.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import Field

from lit3r.app.check import CheckResult, check_claim
from lit3r.server.answering import library_restriction
from lit3r.server.routes import runtime_of
from lit3r.server.runs import run
from lit3r.server.runtime import Runtime
from lit3r.server.schemas import ITEM_ID, LibraryFilters, Text

router = APIRouter(tags=["check"])


class CheckRequest(LibraryFilters):
    claim: Text = Field(description="The claim to check, e.g. a sentence of a draft.")
    papers: list[Annotated[str, Field(pattern=ITEM_ID)]] | None = Field(
        default=None, max_length=200, description="Check against these paper ids only."
    )


@router.post("/check", response_model=CheckResult)
async def check(body: CheckRequest, runtime: Annotated[Runtime, Depends(runtime_of)]) -> dict:
    """Which papers support the claim, which contradict it, with the sentences that say so."""
    ticket = runtime.admit()

    def work() -> dict:
        allowed = library_restriction(ticket.session, body, body.papers)
        named, within = (allowed, None) if body.papers else (None, allowed)
        return check_claim(ticket.session, body.claim, paper_ids=named, allowed_papers=within).model_dump(mode="json")

    return await run(runtime, ticket, work)
