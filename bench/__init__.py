"""Benchmarks of sim_server (``make bench``); results are written under bench/results/."""
