"""`ragline doctor` and `/readyz`: does each configured part answer?"""

from ragline.application.health.check_health import (
    EXACT_SCAN_ADVICE_POINTS,
    Check,
    CheckHealth,
    NamedProbe,
    Observed,
    Obtain,
    Probe,
    adapter_probes,
    obtain,
)

__all__ = [
    "EXACT_SCAN_ADVICE_POINTS",
    "Check",
    "CheckHealth",
    "NamedProbe",
    "Observed",
    "Obtain",
    "Probe",
    "adapter_probes",
    "obtain",
]
