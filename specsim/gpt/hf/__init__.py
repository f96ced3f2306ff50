"""Hugging Face interop: export to and load from the transformers format."""
