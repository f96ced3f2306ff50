"""What a page shows, as plain data (no Streamlit, no plotly)."""
