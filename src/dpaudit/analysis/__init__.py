"""Exact privacy analysis: sensitivities, pairwise losses and worst-case ε."""
