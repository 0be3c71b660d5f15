"""ClaimHolders port: who holds a parse-batch claim, as far as this process can tell.

A worker killed mid-parse (SIGKILL, OOM) cannot give its claim back, and its lease keeps
every waiter off the batch until it lapses (`ParseCacheSettings.lease`, 60 s). A process
can tell, for the claims made on its own host, whether their process still runs, so the
claim of one known dead is released at once; a claim from another host waits out its
lease (renewed every third of it while its worker lives).
"""

from __future__ import annotations

from typing import Protocol


class ClaimHolders(Protocol):
    @property
    def name(self) -> str:
        """The owner name this process claims batches under."""
        ...

    @property
    def host_prefix(self) -> str:
        """What every owner name made on this host starts with."""
        ...

    def is_gone(self, owner: str) -> bool:
        """True only when `owner` is a process of this host that no longer runs (never
        for this process, another host, or a name it cannot read)."""
        ...
