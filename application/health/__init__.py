"""`ragline doctor` and `/readyz`: does each configured part answer?"""

from ragline.application.health.check_health import (
    Check,
    CheckHealth,
    NamedProbe,
    Obtain,
    Probe,
    adapter_probes,
    obtain,
)

__all__ = ["Check", "CheckHealth", "NamedProbe", "Obtain", "Probe", "adapter_probes", "obtain"]
