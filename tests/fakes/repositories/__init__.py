"""The fake repositories, one module per repository port; `FakeUnitOfWork` holds them."""
