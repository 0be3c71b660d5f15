"""Contract kit for the upload repository (`uow.uploads`): the first (user, key) wins, a
duplicate leaves the unit usable, rows are per user, nothing is visible before commit."""

from __future__ import annotations

from ragline.application.ports.repositories.uploads import UploadRecord
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.testing.kits.persistence import T0, StoreContract, uid


def record(user_id: str, key: str, sha256: str = "a" * 64) -> UploadRecord:
    return UploadRecord(
        user_id=user_id,
        idempotency_key=key,
        sha256=sha256,
        dataset_id="2001",
        doc_id="9007199254740993",
        task_id=uid("upload"),
        created_at=T0,
    )


class UploadRepositoryContract(StoreContract):
    """What every UploadRepository must show; fixture `uow_factory`."""

    async def test_the_first_key_wins(self, uow_factory: UnitOfWorkFactory) -> None:
        user, key = uid("u"), uid("key")
        first = record(user, key)
        async with uow_factory() as uow:
            assert await uow.uploads.get(user, key) is None
            assert await uow.uploads.add(first) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.uploads.add(record(user, key, "b" * 64)) is False
            # the unit is still usable after the refused insert
            assert await uow.uploads.get(user, key) == first
            assert await uow.uploads.add(record(user, uid("key"))) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.uploads.get(user, key) == first
            assert await uow.uploads.get(uid("other-user"), key) is None

    async def test_keys_are_per_user_and_rolled_back(self, uow_factory: UnitOfWorkFactory) -> None:
        key = uid("key")
        alice, bob = uid("alice"), uid("bob")
        async with uow_factory() as uow:
            assert await uow.uploads.add(record(alice, key))
            await uow.rollback()
        async with uow_factory() as uow:
            assert await uow.uploads.get(alice, key) is None
            assert await uow.uploads.add(record(alice, key))
            assert await uow.uploads.add(record(bob, key))  # another user's same key
            await uow.commit()
        async with uow_factory() as uow:
            found = await uow.uploads.get(bob, key)
            assert found is not None and found.user_id == bob
