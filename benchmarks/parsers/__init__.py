"""Parser benchmark package (see __main__)."""
