"""The PipelineMetrics port."""
