"""Human-readable audit reports (Markdown and self-contained HTML)."""
