"""Driving adapters: the CLI, the HTTP API and the task-topic consumer.

Each decodes its input at the edge and calls a use case.
"""
