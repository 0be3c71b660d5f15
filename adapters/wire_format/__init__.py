"""The wire contracts' encoding, at the edges only: the task consumer decodes with it, the
task and result publishers (the TaskPublisher and ResultPublisher ports) write with it."""
