"""The shipped state machines, run on the reference in-memory store.

CI profile: derandomized, 200 examples of 30 steps; HYPOTHESIS_PROFILE=long runs 5000 of 60.
"""

import os

from hypothesis import settings

from ragline.testing.parse_run import ChunkStatusMachine, ParseRunMachine

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"

TestParseRunMachine = ParseRunMachine.TestCase
TestParseRunMachine.settings = settings(stateful_step_count=60 if LONG else 30)

TestChunkStatusMachine = ChunkStatusMachine.TestCase
TestChunkStatusMachine.settings = settings(stateful_step_count=20)
