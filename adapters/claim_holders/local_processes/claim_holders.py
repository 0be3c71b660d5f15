"""LocalProcessHolders: owner names `<host>/<pid>/<tag>`, and whether such a process runs.

A host name holds no `/`, so the prefix `<host>/` names this host's claims exactly. The
tag tells two processes that reused one pid apart (a restarted process is another owner);
a pid of this host that no longer exists is a dead worker, whose claims may be released.
"""

from __future__ import annotations

import os
import socket
import uuid


class LocalProcessHolders:
    def __init__(self, host: str | None = None, pid: int | None = None) -> None:
        self._host = (host or socket.gethostname() or "localhost")[:64].replace("/", "_")
        self._pid = os.getpid() if pid is None else pid
        self._name = f"{self._host}/{self._pid}/{uuid.uuid4().hex[:8]}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def host_prefix(self) -> str:
        return f"{self._host}/"

    def is_gone(self, owner: str) -> bool:
        if owner == self._name or not owner.startswith(self.host_prefix):
            return False
        pid_text, slash, tag = owner[len(self.host_prefix) :].partition("/")
        if not (pid_text.isdigit() and slash and tag) or int(pid_text) == self._pid:
            return False  # not a name we make, or this very process (another container)
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, OverflowError, OSError):
            return False  # it runs (as another user), or cannot be asked: not known dead
        return False
