"""Document parsers for the CLEANING stage: one module per format, a dispatcher, a sandbox.

Build the port implementation with :func:`ragline.adapters.parser.builtin.factory.build_parser`.
"""
