"""Input and output at the edges: reading documents (:mod:`~neardup.io.readers`), writing
records (:mod:`~neardup.io.writers`), reading one text (:mod:`~neardup.io.text_input`)."""
