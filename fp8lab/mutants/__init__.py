"""Mutation: planted and source-level mutants run against the gates, and their verdicts."""
