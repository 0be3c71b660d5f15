"""`python -m ragline.adapters.persistence.sql.migrations URL [REVISION]`: migrate a database."""

from __future__ import annotations

import sys

from sqlalchemy.engine import make_url

from ragline.adapters.persistence.sql.migrations import current_revision, upgrade_to_head


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(
            "usage: python -m ragline.adapters.persistence.sql.migrations URL [REVISION]",
            file=sys.stderr,
        )
        return 2
    url = argv[0]
    upgrade_to_head(url, argv[1] if len(argv) == 2 else "head")
    shown = make_url(url).render_as_string(hide_password=True)
    print(f"{shown}: at revision {current_revision(url)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
