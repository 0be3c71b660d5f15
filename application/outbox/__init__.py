"""The outbox as an operator sees it: list results by status, redrive DEAD ones, count."""

from ragline.application.outbox.manage import ManageOutbox, RedriveReport, UnknownOutboxStatus

__all__ = ["ManageOutbox", "RedriveReport", "UnknownOutboxStatus"]
