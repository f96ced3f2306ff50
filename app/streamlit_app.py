"""specsim's Streamlit app: `streamlit run app` from the repository root.

The pages live in ``app/views/`` (one thin page per topic); this file only
sets the page config and the navigation.
"""
import streamlit as st

import nav


def main() -> None:
    st.set_page_config(page_title="specsim: speculative decoding", page_icon="🎯", layout="wide")
    sections = {}
    for page in nav.PAGES:
        sections.setdefault(page.section, []).append(
            st.Page(page.path, title=page.title, icon=page.icon, default=page.path == nav.PAGES[0].path))
    st.navigation(sections).run()


main()
