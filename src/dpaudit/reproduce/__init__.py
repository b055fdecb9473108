"""Reproduction of every figure of the three seed papers."""
