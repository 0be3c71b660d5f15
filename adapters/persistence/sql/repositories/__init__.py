"""SQLAlchemy Core repositories, one per table, all on the unit of work's connection."""
