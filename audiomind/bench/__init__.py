"""Benchmarks at scale: task adapters (MMAR, MSU-Bench, the synthetic set), a resumable batch runner, scoring and reports."""
