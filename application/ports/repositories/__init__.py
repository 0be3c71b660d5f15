"""One repository port per aggregate or read model; the unit of work holds them."""
