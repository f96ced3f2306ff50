"""specsim: speculative decoding, simulated exactly and made visible."""
__version__ = "0.1.0"
