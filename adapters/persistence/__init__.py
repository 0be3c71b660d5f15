"""The UnitOfWork and repository ports: one package per storage engine family."""
