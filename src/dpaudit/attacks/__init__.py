"""Attacks on privatised text encodings (HoHo and optimal likelihood-ratio attacks)."""
