"""Plotly figures only: every chart the app draws."""
