"""Reusable test kits shipped with ragline: one contract kit per port (`ragline.testing.kits`)
and the parse-run property machines (`ragline.testing.parse_run`). It sits above the
application: kits import ports; nothing in the product imports the kits."""
