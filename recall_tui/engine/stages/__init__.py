"""One module per pipeline stage (pipeline.md). Each exposes pure functions that the tests
drive with hand-built inputs, and a `run(engine, state) -> Out` that the pipeline times."""
