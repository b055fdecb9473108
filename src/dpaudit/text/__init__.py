"""Text side: corpora, tokenisation and sentence embeddings."""
