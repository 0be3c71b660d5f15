"""`ragline doctor` shows settings with secrets hidden, passwords inside URLs included."""

from __future__ import annotations

import pytest

from ragline.adapters.inbound.cli.doctor import redacted


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("postgresql://user:password@db:5432/app", "postgresql://user:***@db:5432/app"),
        ("amqp://guest:s3cr%40t@rabbit:5672/%2f", "amqp://guest:***@rabbit:5672/%2f"),
        ("mysql+asyncmy://root:@127.0.0.1/test", "mysql+asyncmy://root:***@127.0.0.1/test"),
        ("http://127.0.0.1:6333", "http://127.0.0.1:6333"),
        ("postgresql://user@host/db", "postgresql://user@host/db"),
        ("**********", "**********"),
        (None, "None"),
    ],
)
def test_a_password_in_a_url_is_hidden(value: object, shown: str) -> None:
    assert redacted(value) == shown
