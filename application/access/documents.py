"""The one check of a document reference (user, dataset, doc_id) a caller hands in.

A tenant names only its own documents: another user's is not found, exactly like a document
that does not exist, so an answer never tells a tenant that some id is taken elsewhere.
"""

from __future__ import annotations

from ragline.application.access.caller import Caller
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.unit_of_work import UnitOfWork


async def owned_document(
    uow: UnitOfWork, caller: Caller, user_id: str, dataset_id: str, doc_id: str
) -> DocumentScope | None:
    """The document's scope if `caller` may act for `user_id` and the document is live in
    that scope (it has a run not marked deleted); None otherwise."""
    if not caller.may_act_for(user_id):
        return None
    if await uow.documents.latest_for_document(user_id, dataset_id, doc_id) is None:
        return None
    return DocumentScope(user_id, dataset_id, doc_id)
