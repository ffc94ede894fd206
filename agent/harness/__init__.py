"""The run harnesses: batches, benchmarks, rollouts, setup and the scripted test server. They drive
the core through its public surface, as front ends do, and never import a front end."""
