"""Pieces of one page each: the Trees page's tree walk and tiny-GPT section, the Tiny GPT page's
gallery and statistics, the lesson index, and the Try-it query parameters with their way back."""
