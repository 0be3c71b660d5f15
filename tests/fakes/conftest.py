"""Rewrite asserts in the contract kits so their failures explain themselves."""

import pytest

pytest.register_assert_rewrite("ragline.testing.kits")
