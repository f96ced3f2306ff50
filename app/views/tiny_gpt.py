"""Work in progress."""
import streamlit as st

st.info("This page is being built.")
